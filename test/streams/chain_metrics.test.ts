// chain_metrics keeps a value as the metrics service sent it (value_text) beside its double: a
// count or an amount past 2^53 (feesPaid is in wei) is a JSON number whose digits a double drops.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/pipeline.js';
import { newRun, noteAddedColumns, runPipeline } from '../../src/pipeline/run.js';
import { icebergPublisher } from '../../src/iceberg/table.js';
import { StateStore } from '../../src/state/store.js';
import { lakeRows, quiet, scriptedServer } from '../helpers.js';

// Written as the service writes numbers: digits a double would change, and one it keeps.
const BODY = '{"results":[{"value":4441430702476318700001,"timestamp":1761868800},{"value":0.1000000000000000055511151231257827,"timestamp":1761782400},{"value":985304,"timestamp":1761696000}]}';

let server: Awaited<ReturnType<typeof scriptedServer>>;
beforeAll(async () => {
  server = await scriptedServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(BODY);
  });
});
afterAll(() => server.close());

describe('chain_metrics', () => {
  it('keeps every digit of a value as sent in value_text, its double in value', async () => {
    const lake = mkdtempSync(join(tmpdir(), 'cl-metrics-'));
    const p = parsePipeline(`name: m\nsources:\n  metrics: { url: "${server.url}" }\nstreams:\n  - { table: chain_metrics, chainIds: ["43114"], metrics: [feesPaid], timeInterval: day, startTimestamp: 1761696000 }\n`, 'm.yaml');
    const r = await runPipeline(p, { lake, logger: quiet });
    expect(r.status).toBe('ok');
    const got = await lakeRows(lake, 'SELECT epoch(timestamp)::BIGINT AS t, value, value_text FROM chain_metrics ORDER BY t');
    expect(got.map((x) => [Number(x.t), x.value_text])).toEqual([
      [1761696000, '985304'],
      [1761782400, '0.1000000000000000055511151231257827'],
      [1761868800, '4441430702476318700001'],
    ]);
    expect(got.map((x) => Number(x.value))).toEqual([985304, 0.1, 4441430702476318700001]);

    // A lake whose rows were landed before value_text was a column: a run says so, once its
    // schema lacks it; this one's has it, so its next run says nothing.
    const { jobs } = newRun(p, lake);
    const store = await StateStore.open(lake, { publisher: (st) => icebergPublisher(st) });
    expect(await store.publisher!.columns!('chain_metrics')).toContain('value_text');
    await noteAddedColumns(store, jobs);
    expect(jobs[0]!.report.notes).toEqual([]);
    const before = { publisher: { ...store.publisher!, columns: async () => ['chain_id', 'metric', 'time_interval', 'timestamp', 'value'] } };
    await noteAddedColumns(before, jobs);
    expect(jobs[0]!.report.notes).toEqual(['a column new since its rows were written: value_text (NULL in those rows; `chainlake rebuild chain_metrics` fills it from the raw pages, `--full-refresh chain_metrics` by fetching again)']);
  });
});
