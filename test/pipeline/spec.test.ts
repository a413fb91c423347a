// The run spec travels to workers as JSON in the queue: a worker must derive from it the pipeline
// and the options the run in one process derives.
import { describe, expect, it } from 'vitest';
import { specOptions, specPipeline, type RunSpec } from '../../src/pipeline/spec.js';
import { workOrders } from '../../src/pipeline/queued.js';
import { newRun } from '../../src/pipeline/run.js';

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
  lake: 'data/lake',
  options: { flushRows: 500, fullRefresh: ['erc_transfers'], strict: true, keepRaw: false },
  urls: { data: 'http://127.0.0.1:9999', metrics: undefined },
};

describe('run spec', () => {
  it('reads back from JSON as the same pipeline and options', () => {
    process.env.CHAINLAKE_SPEC_TEST_KEY = 'k';
    const local = specPipeline(spec);
    const { jobs } = newRun(local, spec.lake);
    const orders = workOrders(jobs, spec);
    // One job per transfer partition, one for the table merged across partitions.
    expect(orders.map((o) => o.order.table)).toEqual(['erc_transfers', 'erc_transfers', 'blockchains']);
    for (const { order } of orders) {
      expect(order.spec).toBe(spec);
      const sent = JSON.parse(JSON.stringify(order)) as typeof order;
      expect(specOptions(sent.spec)).toEqual(specOptions(spec));
      expect(specPipeline(sent.spec)).toEqual(local);
    }
    expect(specOptions(spec)).toEqual({ flushRows: 500, fullRefresh: new Set(['erc_transfers']), strict: true, keepRaw: false });
    expect(local.sources.data.url).toBe('http://127.0.0.1:9999');
    expect(local.sources.data.apiKey).toBe('k');
    expect(local.sources.metrics.url).toBe(specPipeline({ ...spec, urls: {} }).sources.metrics.url);
  });

  it('keeps options left out absent', () => {
    const bare: RunSpec = { ...spec, options: {}, urls: {} };
    expect(specOptions(JSON.parse(JSON.stringify(bare)) as RunSpec)).toEqual({});
    expect(specPipeline(bare).sources.data.url).toBe('http://127.0.0.1:8080');
  });
});
