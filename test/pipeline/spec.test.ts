// The run spec travels to workers as JSON in the queue: a worker must derive from it the pipeline
// and the jobs (a full refresh resolved for each) the run in one process derives.
import { describe, expect, it } from 'vitest';
import { specPipeline, type RunSpec } from '../../src/pipeline/spec.js';
import { workOrders } from '../../src/pipeline/queued.js';
import { newRun } from '../../src/pipeline/run.js';
import { planJobs } from '../../src/pipeline/plan.js';

const TEXT = `name: spec
sources:
  data: { url: "http://127.0.0.1:8080", apiKey: "\${CHAINLAKE_SPEC_TEST_KEY}" }
streams:
  - table: erc_transfers
    chainId: "43114"
    contracts: ["0xb10644cea485f69a5F8859e127911157A0d6D30d", "0x56d1c618EE8c89834395105104F801592420d94b"]
  - table: blockchains
    network: mainnet
`;

const spec: RunSpec = {
  pipeline: { file: 'pipelines/spec.yaml', text: TEXT },
  options: { flushRows: 500, fullRefresh: ['erc_transfers'], strict: true, keepRaw: false },
  urls: { data: 'http://127.0.0.1:9999', metrics: undefined },
};

describe('run spec', () => {
  it('reads back from JSON as the same pipeline and options', () => {
    process.env.CHAINLAKE_SPEC_TEST_KEY = 'k';
    const local = specPipeline(spec);
    const { jobs } = newRun(local, 'data/lake', spec.options.fullRefresh);
    const orders = workOrders(jobs, spec);
    // One job per transfer partition, one for the table merged across partitions.
    expect(orders.map((o) => o.order.table)).toEqual(['erc_transfers', 'erc_transfers', 'blockchains']);
    expect(orders.map((o) => o.partition)).toEqual([...jobs.slice(0, 2).map((j) => j.partition.id), '(table)']);
    // The full refresh is resolved once for each job, as the command line named its tables.
    expect(jobs.map((j) => [j.decl.table, j.fullRefresh])).toEqual([
      ['erc_transfers', true],
      ['erc_transfers', true],
      ['blockchains', false],
    ]);
    for (const { order } of orders) {
      expect(order.spec).toBe(spec);
      const sent = JSON.parse(JSON.stringify(order)) as typeof order;
      expect(sent.spec.options).toEqual(spec.options);
      expect(specPipeline(sent.spec)).toEqual(local);
      // A worker plans the same jobs from what it was sent.
      const there = planJobs(specPipeline(sent.spec), new Map(), sent.spec.options.fullRefresh).filter((j) => j.decl.table === order.table);
      expect(there.map((j) => [j.partition.id, j.fullRefresh])).toEqual(jobs.filter((j) => j.decl.table === order.table).map((j) => [j.partition.id, j.fullRefresh]));
    }
    expect(local.sources.data.url).toBe('http://127.0.0.1:9999');
    expect(local.sources.data.apiKey).toBe('k');
    expect(local.sources.metrics.url).toBe(specPipeline({ ...spec, urls: {} }).sources.metrics.url);
  });

  it('keeps options left out absent', () => {
    const bare: RunSpec = { ...spec, options: {}, urls: {} };
    expect((JSON.parse(JSON.stringify(bare)) as RunSpec).options).toEqual({});
    expect(planJobs(specPipeline(bare), new Map()).map((j) => j.fullRefresh)).toEqual([false, false, false]);
    expect(specPipeline(bare).sources.data.url).toBe('http://127.0.0.1:8080');
  });
});
