// l1_validator_metrics (the metrics service's L1 validator fee series, a merge table) against a
// clocked simulator: every point of every scope compared with what the world served, a rerun two
// days on fetching only from the newest committed point, a third at the same time adding nothing,
// fees past 2^53 kept to the digit, every answer accepted by the official client's schema, and the
// simulator's and the configuration's refusals naming what is wrong.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPipeline, loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import type { StreamConfig } from '../../src/decl/stream.js';
import { runPipeline } from '../../src/pipeline/run.js';
import type { RunReport } from '../../src/pipeline/report.js';
import {
  L1_NODE_METRICS, L1_SUBNET_METRICS, L1_TOTAL_METRICS, L1_VALIDATION_METRICS, listL1Metric, type L1Scope,
} from '../../src/simulator/l1_metrics.js';
import { iterate } from '../../src/simulator/listing.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { LAKESIDE_SUBNET_ID } from '../../src/simulator/subnets.js';
import { validatorWorld } from '../../src/simulator/validators.js';
import { DEMO } from '../../src/simulator/world.js';
import { L1_METRICS, l1ValidatorMetrics } from '../../src/streams/l1_validator_metrics.js';
import { expectCleanRun, lakeRows as rows, line, quiet, sorted } from '../helpers.js';
import { officialProblems } from '../official.js';

const DAY = 86_400;
const TABLE = 'l1_validator_metrics';
const FROM = DEMO.now - 20 * DAY;
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** Run 1 five hours into the world's day, run 2 two days and seven hours in (and run 3 as run 2). */
const AT = [DEMO.now + 5 * 3600, DEMO.now + 2 * DAY + 7 * 3600, DEMO.now + 2 * DAY + 7 * 3600];

describe('l1_validator_metrics on a clocked world', () => {
  const clock = { t: DEMO.now as number };
  let sim: Simulator;
  let lake: string;
  let streams: StreamConfig[];
  const reports: RunReport[] = [];
  const counts: number[] = [];
  /** Requests each run sent to each route. */
  const sent: Array<Record<string, number>> = [];
  let big: { validationId: string; nodeId: string };
  let dry: string;
  /** The big validation's node, which validates another L1 too. */
  let shared: string;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 7, worldNow: () => clock.t });
    const fees = validatorWorld(sim.world).l1Fees('mainnet');
    // The validation whose fees pass 2^53, one that ran dry before the world's now, a node with two validations.
    const b = fees.find((v) => v.balance > SAFE && v.rate * BigInt(DEMO.now - v.creation) > SAFE)!;
    big = { validationId: b.validationId, nodeId: b.nodeId };
    dry = fees.find((v) => v.creation < DEMO.now && v.rate * BigInt(DEMO.now - v.creation) > v.balance)!.validationId;
    shared = big.nodeId;
    expect(fees.filter((v) => v.nodeId === shared).length).toBeGreaterThan(1);
    const other = fees.find((v) => v.subnetId !== LAKESIDE_SUBNET_ID)!.subnetId;
    streams = [
      { table: TABLE, network: 'mainnet', metrics: [...L1_TOTAL_METRICS] },
      { table: TABLE, network: 'mainnet', metrics: [...L1_VALIDATION_METRICS], l1ValidationIds: [big.validationId, dry] },
      { table: TABLE, network: 'mainnet', metrics: [...L1_NODE_METRICS], nodeIds: [shared] },
      { table: TABLE, network: 'mainnet', metrics: [...L1_SUBNET_METRICS], subnetIds: [LAKESIDE_SUBNET_ID, other], startTimestamp: FROM },
    ];
    lake = mkdtempSync(join(tmpdir(), 'cl-l1metrics-'));
    const p: Pipeline = loadPipeline('pipelines/demo.yaml');
    for (const s of Object.values(p.sources)) s.url = sim.url;
    p.streams = streams;
    for (const at of AT) {
      clock.t = at;
      const before = { ...sim.stats.byRoute };
      reports.push(await runPipeline(p, { lake, logger: quiet }));
      sent.push(Object.fromEntries(Object.entries(sim.stats.byRoute).filter(([r]) => r.startsWith('l1')).map(([r, n]) => [r, n - (before[r] ?? 0)])));
      counts.push(Number((await rows(lake, `SELECT count(*) n FROM ${TABLE}`))[0]!.n));
    }
  });
  afterAll(async () => {
    await sim?.close();
  });

  /** Every point the world serves at `at` for the pipeline's entries, as rows say them. */
  function served(at: number): string[] {
    const out: string[] = [];
    for (const s of streams) {
      for (const part of l1ValidatorMetrics.partitions(s)) {
        const { scope, scopeId, metric } = part.values as { scope: L1Scope; scopeId: string; metric: string };
        const range = s.startTimestamp !== undefined ? { startTimestamp: s.startTimestamp as number } : {};
        for (const pt of iterate(listL1Metric(sim, scope, scopeId, metric, range, at))) out.push(line(scope, scopeId, metric, pt.timestamp, String(pt.value)));
      }
    }
    return out;
  }

  it('completes every partition without rejects or unknown fields, every run', () => {
    for (const r of reports) expectCleanRun(r, { drift: false });
  });

  it('lands every point of every scope as the world served it at the last run, keys unique', async () => {
    const got = (await rows(lake, `SELECT scope, scope_id, metric, epoch(timestamp)::BIGINT t, value_text, value, network FROM ${TABLE}`));
    expect(sorted(got.map((r) => line(r.scope, r.scope_id, r.metric, r.t, r.value_text)))).toEqual(sorted(served(AT[2]!)));
    expect(new Set(got.map((r) => r.network))).toEqual(new Set(['mainnet']));
    // Years of daily points in all, each scope present, the running day's point as the last run saw it.
    const scopes = await rows(lake, `SELECT scope, count(*) n, count(DISTINCT scope_id) ids, max(epoch(timestamp))::BIGINT newest FROM ${TABLE} GROUP BY 1 ORDER BY 1`);
    expect(scopes.map((r) => [r.scope, r.ids, r.newest])).toEqual([
      ['all', '1', String(Math.floor(AT[2]! / DAY) * DAY)], ['node', '1', String(Math.floor(AT[2]! / DAY) * DAY)],
      ['subnet', '2', String(Math.floor(AT[2]! / DAY) * DAY)], ['validation', '2', String(Math.floor(AT[2]! / DAY) * DAY)],
    ]);
    expect(Number(scopes[0]!.n)).toBeGreaterThan(3 * 600);
    const [k] = await rows(lake, `SELECT count(*) n, count(DISTINCT (network, scope, scope_id, metric, timestamp)) keys FROM ${TABLE}`);
    expect(k!.keys).toBe(k!.n);
    // The dry validation's last points: nothing paid, its cumulative flat at what its balance held.
    const tail = await rows(lake, `SELECT metric, value_text FROM ${TABLE} WHERE scope_id = '${dry}' AND timestamp = (SELECT max(timestamp) FROM ${TABLE}) ORDER BY 1`);
    const fee = validatorWorld(sim.world).l1Fees('mainnet').find((v) => v.validationId === dry)!;
    expect(tail).toEqual([{ metric: 'validationCumulativeFeesDaily', value_text: String(fee.balance) }, { metric: 'validationFeesDaily', value_text: '0' }]);
  });

  it('agrees with itself: the fees of a day are the growth of the cumulative series, and a day with fees has payers', async () => {
    const pairs = `('totalValidatorFeesDaily', 'totalCumulativeFeesDaily'), ('validationFeesDaily', 'validationCumulativeFeesDaily'),
      ('perNodeDailyFeesPaid', 'perNodeCumulativeFeesPaid'), ('perSubnetDailyFeesPaid', 'perSubnetCumulativeFeesPaid')`;
    const [r] = await rows(lake, `
      WITH pair(daily, cumulative) AS (VALUES ${pairs}),
      c AS (SELECT scope, scope_id, timestamp, value_text::HUGEINT - lag(value_text::HUGEINT) OVER (PARTITION BY scope, scope_id, metric ORDER BY timestamp) grew, metric
            FROM ${TABLE} WHERE metric IN (SELECT cumulative FROM pair))
      SELECT count(*) n, count(*) FILTER (WHERE d.value_text::HUGEINT <> c.grew) bad
      FROM c JOIN pair p ON p.cumulative = c.metric JOIN ${TABLE} d ON d.metric = p.daily AND d.scope = c.scope AND d.scope_id = c.scope_id AND d.timestamp = c.timestamp
      WHERE c.grew IS NOT NULL`);
    expect(Number(r!.n)).toBeGreaterThan(2000);
    expect(r!.bad).toBe('0');
    // A day with fees has paying validators, one without has none.
    const [p] = await rows(lake, `SELECT count(*) n, count(*) FILTER (WHERE (f.value_text = '0') <> (v.value_text = '0')) bad FROM ${TABLE} f JOIN ${TABLE} v USING (scope, scope_id, timestamp)
      WHERE (f.metric, v.metric) IN (('totalValidatorFeesDaily', 'totalPayingValidatorsDaily'), ('perSubnetDailyFeesPaid', 'perSubnetPayingValidators'))`);
    expect(Number(p!.n)).toBeGreaterThan(700);
    expect(p!.bad).toBe('0');
  });

  it('each rerun asks every series once, from its newest committed point on; the third adds nothing', () => {
    const partitions = streams.reduce((n, s) => n + l1ValidatorMetrics.partitions(s).length, 0);
    expect(partitions).toBe(3 + 2 * 2 + 2 + 2 * 3);
    const wanted = { l1TotalMetrics: 3, l1ValidationMetrics: 4, l1NodeMetrics: 2, l1SubnetMetrics: 6 };
    for (const s of sent) expect(s).toEqual(wanted);
    const st = reports.map((r) => r.streams.filter((x) => x.table === TABLE).reduce((a, x) => ({ requests: a.requests + x.requests, rows: a.rows + x.rows }), { requests: 0, rows: 0 }));
    // Run 2: the day run 1 saw running, and the two days since, per series.
    expect(st[1]).toEqual({ requests: partitions, rows: partitions * 3 });
    expect(st[2]).toEqual({ requests: partitions, rows: partitions });
    expect(counts[1]).toBe(counts[0]! + partitions * 2);
    expect(counts[2]).toBe(counts[1]);
  });

  it('keeps fees past 2^53 to the digit, in the total, node, subnet and validation series', async () => {
    // `lost`: points whose double is another number than the one sent; value_text keeps it.
    const got = await rows(lake, `SELECT scope, count(*) FILTER (WHERE value_text::HUGEINT > 9007199254740992) past,
      count(*) FILTER (WHERE value_text::HUGEINT > 9007199254740992 AND value::HUGEINT <> value_text::HUGEINT) lost,
      count(*) FILTER (WHERE value_text::HUGEINT::VARCHAR <> value_text) odd FROM ${TABLE} GROUP BY 1 ORDER BY 1`);
    expect(got.map((r) => r.scope)).toEqual(['all', 'node', 'subnet', 'validation']);
    for (const r of got) {
      expect(Number(r.past), r.scope).toBeGreaterThan(0);
      expect(r.odd, r.scope).toBe('0');
      if (r.scope !== 'validation') expect(Number(r.lost), r.scope).toBeGreaterThan(0);
    }
    const [one] = await rows(lake, `SELECT value_text FROM ${TABLE} WHERE scope = 'all' AND metric = 'totalCumulativeFeesDaily' ORDER BY timestamp DESC LIMIT 1`);
    const want = [...iterate(listL1Metric(sim, 'all', '', 'totalCumulativeFeesDaily', {}, AT[2]!))][0]!.value;
    expect(one!.value_text).toBe(String(want));
    expect(BigInt(one!.value_text)).toBeGreaterThan(SAFE);
    expect(BigInt(Number(one!.value_text))).not.toBe(BigInt(one!.value_text));
  });

  it('every answer fits the official client, each route and metric, with and without points', async () => {
    const fees = validatorWorld(sim.world).l1Fees('mainnet');
    const paths: Array<[string, string]> = [
      ...L1_TOTAL_METRICS.map((m): [string, string] => ['l1TotalMetrics', `/v2/validators/metrics/${m}`]),
      ...L1_VALIDATION_METRICS.map((m): [string, string] => ['l1ValidationMetrics', `/v2/validation/${big.validationId}/metrics/${m}`]),
      ...L1_NODE_METRICS.map((m): [string, string] => ['l1NodeMetrics', `/v2/validator/${big.nodeId}/metrics/${m}`]),
      ...L1_SUBNET_METRICS.map((m): [string, string] => ['l1SubnetMetrics', `/v2/subnet/${LAKESIDE_SUBNET_ID}/metrics/${m}?startTimestamp=${FROM}&endTimestamp=${DEMO.now}`]),
      // An id the world does not know: no points.
      ['l1ValidationMetrics', `/v2/validation/${fees[0]!.subnetId}/metrics/validationFeesDaily`],
    ];
    const lengths: number[] = [];
    for (const [route, path] of paths) {
      const r = await fetch(sim.url + path);
      expect(r.status, path).toBe(200);
      const body = JSON.parse(await r.text()) as { results: unknown[] };
      lengths.push(body.results.length);
      expect(officialProblems(route, body), path).toBe('');
    }
    expect(lengths.at(-1)).toBe(0);
    expect(lengths.slice(0, -1).every((n) => n > 0)).toBe(true);
  });

  it('the simulator refuses bad parameters with a 400 naming each', async () => {
    const bad = async (path: string, name: RegExp) => {
      const r = await fetch(sim.url + path);
      expect(r.status, path).toBe(400);
      expect([(await r.json()).message].flat().join('; '), path).toMatch(name);
    };
    await bad('/v2/validators/metrics/validationFeesDaily', /metric must be one of: totalCumulativeFeesDaily, totalValidatorFeesDaily, totalPayingValidatorsDaily/);
    await bad(`/v2/validation/${big.validationId}/metrics/perNodeDailyFeesPaid`, /metric must be one of: validationCumulativeFeesDaily, validationFeesDaily/);
    await bad(`/v2/validator/${big.nodeId}/metrics/totalValidatorFeesDaily`, /metric must be one of: perNodeCumulativeFeesPaid, perNodeDailyFeesPaid/);
    await bad(`/v2/subnet/${LAKESIDE_SUBNET_ID}/metrics/validationFeesDaily`, /metric must be one of: perSubnetDailyFeesPaid/);
    await bad('/v2/validation/0x12/metrics/validationFeesDaily', /l1ValidationId must be an id \(cb58 of 32 bytes\), got "0x12"/);
    await bad('/v2/validator/NodeID-x/metrics/perNodeDailyFeesPaid', /nodeId: "NodeID-x"/);
    await bad('/v2/subnet/abc/metrics/perSubnetDailyFeesPaid', /subnetId must be an id \(cb58 of 32 bytes\), got "abc"/);
    await bad('/v2/validators/metrics/totalValidatorFeesDaily?startTimestamp=10&endTimestamp=5', /startTimestamp must not be greater than endTimestamp/);
    await bad('/v2/validators/metrics/totalValidatorFeesDaily?startTimestamp=-1', /startTimestamp/);
    await bad('/v2/validators/metrics/totalValidatorFeesDaily?endTimestamp=soon', /endTimestamp/);
  });
});

describe('configuration of l1_validator_metrics', () => {
  const check = (stream: Record<string, unknown>) => () => checkPipeline({ name: 'x', streams: [{ table: TABLE, ...stream }] }, 'x.yaml');
  const V = '2KLH8HHinrWxvo6VEPrVcAJS6D5itrPGjjJiCmS7UY7mdFgWtB';

  it('names the place of every bad value', () => {
    expect(check({ metrics: ['totalValidatorFeesDaily'] })).toThrow(/x\.yaml: streams\[0\]\.network: is required for l1_validator_metrics/);
    expect(check({ network: 'mainnet' })).toThrow(/streams\[0\]\.metrics: is required for l1_validator_metrics/);
    expect(check({ network: 'fuji', metrics: ['totalValidatorFeesDaily'] })).toThrow(/streams\[0\]\.network: "fuji": the metrics service's L1 validator series take no network and are mainnet's/);
    expect(check({ network: 'mainnet', metrics: ['totalValidatorFeesDaily', 'validationFeesDaily'] })).toThrow(/streams\[0\]\.metrics\[1\]: "validationFeesDaily" is not a metric of all L1 validators/);
    expect(check({ network: 'mainnet', metrics: ['totalValidatorFeesDaily'], l1ValidationIds: [V] })).toThrow(/streams\[0\]\.metrics\[0\]: "totalValidatorFeesDaily" is not a metric of l1ValidationIds \(validationCumulativeFeesDaily, validationFeesDaily\)/);
    expect(check({ network: 'mainnet', metrics: ['perNodeDailyFeesPaid'], nodeIds: ['NodeID-x'] })).toThrow(/streams\[0\]\.nodeIds\[0\]: "NodeID-x" is not a NodeID/);
    expect(check({ network: 'mainnet', metrics: ['validationFeesDaily'], l1ValidationIds: ['0x12'] })).toThrow(/streams\[0\]\.l1ValidationIds\[0\]: "0x12" is not an id \(cb58 of 32 bytes\)/);
    expect(check({ network: 'mainnet', metrics: ['perSubnetDailyFeesPaid'], subnetIds: [V, V] })).toThrow(/streams\[0\]\.subnetIds\[1\]: .* is listed twice/);
    expect(check({ network: 'mainnet', metrics: ['validationFeesDaily'], l1ValidationIds: [V], subnetIds: [V] })).toThrow(/streams\[0\]\.subnetIds: give one of l1ValidationIds, nodeIds and subnetIds, not l1ValidationIds and subnetIds/);
    expect(check({ network: 'mainnet', metrics: ['totalValidatorFeesDaily'], startTimestamp: 1_700_000_010, endTimestamp: 1_700_000_005 })).toThrow(/streams\[0\]\.endTimestamp: startTimestamp 2023-11-14T22:13:30Z must be before endTimestamp 2023-11-14T22:13:25Z \(the end is excluded\)/);
  });

  it('names a series by its scope and id, and sends the range as asked', () => {
    const p = checkPipeline({ name: 'x', streams: [{ table: TABLE, network: 'mainnet', metrics: ['perSubnetPayingValidators'], subnetIds: [V], startTimestamp: 1_700_000_000 }] }, 'x.yaml');
    expect(l1ValidatorMetrics.partitions(p.streams[0]!)).toEqual([
      { id: `mainnet/subnet/${V}/perSubnetPayingValidators`, path: { metric: 'perSubnetPayingValidators' }, query: { startTimestamp: '1700000000' }, values: { network: 'mainnet', scope: 'subnet', scopeId: V, metric: 'perSubnetPayingValidators' } },
    ]);
    // The declaration's metric lists are the simulator's (each the enum of its path).
    expect(L1_METRICS).toEqual({ all: [...L1_TOTAL_METRICS], validation: [...L1_VALIDATION_METRICS], node: [...L1_NODE_METRICS], subnet: [...L1_SUBNET_METRICS] });
  });
});
