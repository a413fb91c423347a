// A block-ranged table bounded by dates: on the simulator, October's transfers of a token land
// exactly (as a run by the equivalent blocks, and as the October rows of a wider run), the blocks
// of the dates are found once and remembered in the lake (a rerun asks for none), the dry run shows
// them, and a date past the chain's head is said.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parsePipeline, type Pipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { runOutcome } from '../../src/pipeline/report.js';
import { formatPlan, planRun } from '../../src/pipeline/plan.js';
import { maxProbes } from '../../src/pipeline/block_search.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { WORLD_NOW } from '../../src/simulator/evm.js';
import { StateStore } from '../../src/state/store.js';
import { lakeContents, lakeRows, quiet, recordingProxy } from '../helpers.js';
import { cliHere } from '../lake-fixture.js';

const CONTRACT = '0xb10644cea485f69a5f8859e127911157a0d6d30d';
const OTHER = '0x56d1c618ee8c89834395105104f801592420d94b';
const OCTOBER = Date.UTC(2025, 9, 1) / 1000;
const NOVEMBER = Date.UTC(2025, 10, 1) / 1000;
const tmp = () => mkdtempSync(join(tmpdir(), 'cl-dates-'));
/** One still world for the file: every test reads it, none changes it. */
let s: Simulator;
beforeAll(async () => {
  s = await startSimulator({ port: 0, seed: 7 });
});
afterAll(() => s.close());
const stops: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** A recording proxy in front of the simulator, closed after the test. */
async function proxied(): Promise<Awaited<ReturnType<typeof recordingProxy>>> {
  const proxy = await recordingProxy(s.url);
  stops.push(() => proxy.close());
  return proxy;
}

/** A pipeline of erc_transfers with the bounds as written in YAML (`startTimestamp: 2025-10-01`). */
function pipeline(url: string, bounds: string, contracts = [CONTRACT]): Pipeline {
  const yaml = `name: oct\nsources:\n  data: { url: "${url}" }\nstreams:\n  - table: erc_transfers\n    chainId: "43114"\n    contracts: [${contracts.map((c) => `"${c}"`).join(', ')}]\n${bounds
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n')}\n`;
  return parsePipeline(yaml, 'oct.yaml');
}

/** The first block at or after t on the simulator's chain, by reading block times one by one near the guess. */
function firstBlockAt(t: number): number {
  const head = s.world.headBlock('43114');
  let n = head;
  while (n > 0 && s.world.block('43114', n - 1).blockTimestamp >= t) n -= Math.min(n, Math.max(1, Math.floor((s.world.block('43114', n - 1).blockTimestamp - t) / 4)));
  while (s.world.block('43114', n).blockTimestamp < t) n++;
  return n;
}

const oneBlock = (url: string) => /\/blocks\/\d+/.test(url);
const latest = (url: string) => /\/blocks\?/.test(url);

describe('dates instead of blocks', () => {
  it("October by dates: the transfers of October exactly, as by the equivalent blocks; a rerun asks no block; the dry run shows the blocks", async () => {
    const proxy = await proxied();
    const start = firstBlockAt(OCTOBER);
    const end = firstBlockAt(NOVEMBER);
    expect(s.world.block('43114', start - 1).blockTimestamp).toBeLessThan(OCTOBER);
    expect(end).toBeLessThanOrEqual(s.world.headBlock('43114'));

    const lake = tmp();
    const p = pipeline(proxy.url, 'startTimestamp: 2025-10-01\nendTimestamp: 2025-11-01');
    expect(p.streams[0]).toMatchObject({ startTimestamp: OCTOBER, endTimestamp: NOVEMBER });
    const before = planRun(p, { lake });
    expect(before.streams[0]!.partitions[0]!.from).toContain("from the first block at or after 2025-10-01T00:00:00Z to the first block at or after 2025-11-01T00:00:00Z (exclusive); startTimestamp and endTimestamp: found at the run's start");
    expect(before.streams[0]!.partitions[0]!.searches).toBe(2);

    const r = await runPipeline(p, { lake, logger: quiet });
    expect(r.status).toBe('ok');
    const probes = proxy.requests.filter((q) => oneBlock(q.url));
    expect(probes.length).toBeGreaterThan(0);
    expect(probes.length).toBeLessThanOrEqual(2 * maxProbes(end + 1));
    expect(proxy.requests.filter((q) => latest(q.url))).toHaveLength(1);
    // The search's requests are the partition's: in the run's report, and its budget.
    expect(r.streams[0]!.requests).toBe(proxy.requests.length);
    for (const q of proxy.requests.filter((x) => x.url.includes('/transfers'))) {
      const u = new URL(q.url, 'http://x');
      expect(Number(u.searchParams.get('startBlock'))).toBeGreaterThanOrEqual(start);
      expect(Number(u.searchParams.get('endBlock'))).toBeLessThanOrEqual(end);
    }
    expect(new StateStore(lake).blockTimes('43114')).toEqual([
      { time: OCTOBER, block: start },
      { time: NOVEMBER, block: end },
    ]);
    // The lake's record is not a partition: status, check and the tables see the table's states only.
    expect(new StateStore(lake).all().map((x) => x.table)).toEqual(['erc_transfers']);
    expect((await cliHere(['check', '--lake', lake])).code).toBe(0);

    // The same rows as a run by the equivalent blocks.
    const byBlocks = tmp();
    expect((await runPipeline(pipeline(s.url, `startBlock: ${start}\nendBlock: ${end}`), { lake: byBlocks, logger: quiet })).status).toBe('ok');
    const rows = (await lakeContents(lake)).erc_transfers!;
    expect(rows.length).toBeGreaterThan(10);
    expect(rows).toEqual((await lakeContents(byBlocks)).erc_transfers);
    // And exactly the rows of a wider run whose block_timestamp is in October.
    const wide = tmp();
    expect((await runPipeline(pipeline(s.url, `startBlock: ${start - 200_000}`), { lake: wide, logger: quiet })).status).toBe('ok');
    const all = (await lakeContents(wide)).erc_transfers!;
    const inOctober = all.filter((x) => {
      const t = Date.parse((JSON.parse(x) as { block_timestamp: string }).block_timestamp.replace(' ', 'T').replace('+00', 'Z')) / 1000;
      return t >= OCTOBER && t < NOVEMBER;
    });
    expect(all.length).toBeGreaterThan(inOctober.length);
    expect(inOctober).toEqual(rows);

    // A rerun: the blocks are remembered, and every block below the end is committed: nothing is asked.
    proxy.requests.length = 0;
    expect((await runPipeline(p, { lake, logger: quiet })).status).toBe('ok');
    expect(proxy.requests.map((q) => q.url)).toEqual([]);
    // A rerun with a token more: its window is fetched, its bounds asked of no block.
    const two = tmp();
    expect((await runPipeline(p, { lake: two, logger: quiet })).status).toBe('ok');
    proxy.requests.length = 0;
    expect((await runPipeline(pipeline(proxy.url, 'startTimestamp: 2025-10-01\nendTimestamp: 2025-11-01', [CONTRACT, OTHER]), { lake: two, logger: quiet })).status).toBe('ok');
    expect(proxy.requests.filter((q) => q.url.includes(OTHER)).length).toBeGreaterThan(0);
    expect(proxy.requests.filter((q) => oneBlock(q.url))).toEqual([]);
    expect(proxy.requests.filter((q) => latest(q.url))).toHaveLength(1);

    // The dry run shows the remembered blocks, and counts no search: for a partition not fetched yet too.
    const more = planRun(pipeline(proxy.url, 'startTimestamp: 2025-10-01\nendTimestamp: 2025-11-01', [CONTRACT, OTHER]), { lake });
    expect(more.streams[0]!.partitions.map((x) => [x.start, x.from, x.searches])).toEqual([
      ['done', `every block below ${end} is committed: nothing to fetch`, undefined],
      ['new', `from block ${start} to block ${end} (exclusive)`, undefined],
    ]);
    expect(formatPlan(more)).toContain(`${'43114/' + OTHER}: new, from block ${start} to block ${end} (exclusive)`);
  });

  it('a date after the head: the end is the head, and said; a start after it fetches nothing, said; neither is remembered', async () => {
    const proxy = await proxied();
    const head = s.world.headBlock('43114');
    expect(s.world.block('43114', head).blockTimestamp).toBe(WORLD_NOW);

    const lake = tmp();
    const r = await runPipeline(pipeline(proxy.url, 'startTimestamp: 2025-10-31T12:00:00Z\nendTimestamp: 2025-12-01'), { lake, logger: quiet });
    expect(r.status).toBe('ok');
    expect(r.streams[0]!.notes).toEqual([`43114/${CONTRACT}: endTimestamp 2025-12-01T00:00:00Z is after the chain's head (block ${head} at 2025-11-01T00:00:00Z): fetched to the head; a later run goes on`]);
    expect(new StateStore(lake).blockTimes('43114').map((x) => x.time)).toEqual([Date.UTC(2025, 9, 31, 12) / 1000]);
    const state = new StateStore(lake).statesOf('erc_transfers')[0]!;
    expect(state.cursor.nextBlock).toBeLessThanOrEqual(head + 1);
    expect(state.cursor.nextBlock).toBeGreaterThan(head - 21_600);

    const later = tmp();
    proxy.requests.length = 0;
    const r2 = await runPipeline(pipeline(proxy.url, 'startTimestamp: 2025-11-02'), { lake: later, logger: quiet });
    expect(r2.status).toBe('ok');
    expect(r2.streams[0]!.notes).toEqual([`43114/${CONTRACT}: startTimestamp 2025-11-02T00:00:00Z is after the chain's head (block ${head} at 2025-11-01T00:00:00Z): nothing to fetch yet`]);
    expect(r2.streams[0]!.rows).toBe(0);
    expect(proxy.requests.filter((q) => q.url.includes('/transfers') || oneBlock(q.url))).toEqual([]);
    expect(new StateStore(later).blockTimes('43114')).toEqual([]);
  });

  it("blocks by time, a block a request: the minute's blocks, each once", async () => {
    const lake = tmp();
    const p = parsePipeline(`name: minute\nsources:\n  data: { url: "${s.url}" }\nstreams:\n  - { table: blocks, chainId: "43114", startTimestamp: "2025-10-31T23:58:00Z", endTimestamp: "2025-10-31T23:59Z" }\n`, 'minute.yaml');
    expect((await runPipeline(p, { lake, logger: quiet })).status).toBe('ok');
    const times = (await lakeContents(lake)).blocks!.map((x) => Date.parse((JSON.parse(x) as { block_timestamp: string }).block_timestamp.replace(' ', 'T').replace('+00', 'Z')) / 1000);
    const start = NOVEMBER - 120;
    expect(times.sort()).toEqual(Array.from({ length: 30 }, (_, i) => start + 2 * i));
  });

  it('a record of block times that is not one is refused, naming its file', async () => {
    const lake = tmp();
    const p = pipeline(s.url, 'startTimestamp: 2025-10-01\nendTimestamp: 2025-11-01');
    expect((await runPipeline(p, { lake, logger: quiet })).status).toBe('ok');
    const dir = new StateStore(lake).path('_state/_block_times');
    expect(readdirSync(dir)).toHaveLength(1);
    const file = join(dir, readdirSync(dir)[0]!);
    writeFileSync(file, readFileSync(file, 'utf8').replace(/"block": (\d+)\s*}\s*]/, '"block": 5 }]'));
    expect(() => planRun(p, { lake })).toThrow(/_state\/_block_times\/43114-[0-9a-f]+\.json: not a record of block times \(times and blocks out of order at time 1761955200\); delete it and the next run finds them again/);
  });
});

describe('a start moved before what the lake fetched', () => {
  const SEPTEMBER = Date.UTC(2025, 8, 1) / 1000;
  const count = async (lake: string) => Number((await lakeRows(lake, 'SELECT count(*) AS n FROM erc_transfers'))[0]!.n);

  it('is refused, said by the run and its dry run, lands nothing, moves nothing; --full-refresh fetches from it; a later start past the cursor is where the fetched blocks begin', async () => {
    const lake = tmp();
    const october = pipeline(s.url, 'startTimestamp: 2025-10-01\nendTimestamp: 2025-11-01');
    expect((await runPipeline(october, { lake, logger: quiet })).status).toBe('ok');
    const start = firstBlockAt(OCTOBER);
    const before = new StateStore(lake).statesOf('erc_transfers')[0]!;
    expect(before.from).toBe(start);
    const rows = await count(lake);

    const september = pipeline(s.url, 'startTimestamp: 2025-09-01\nendTimestamp: 2025-11-01');
    const r = await runPipeline(september, { lake, logger: quiet });
    expect(r.status).toBe('failed');
    const sep = firstBlockAt(SEPTEMBER);
    expect(r.streams[0]!.errors).toEqual([
      `43114/${CONTRACT}: its configured start (startTimestamp 2025-09-01T00:00:00Z) is block ${sep}, below block ${start} where the blocks this lake fetched of it begin: a run resumes at its cursor and would fetch nothing below block ${start}, so nothing is fetched; run with \`--full-refresh erc_transfers\` to fetch it from the new start, or set the start back to block ${start} or later`,
    ]);
    expect(r.streams[0]!.misconfigured).toBe(1);
    expect(runOutcome(r)).toEqual({ code: 1, line: expect.stringContaining("the pipeline's configuration of a partition does not fit the lake") });
    expect(await count(lake)).toBe(rows);
    expect(new StateStore(lake).statesOf('erc_transfers')[0]!).toEqual(before);
    // The run found September's block and the lake remembers it: the dry run now knows, and says so.
    const plan = planRun(september, { lake });
    expect(plan.streams[0]!.partitions[0]).toMatchObject({ start: 'refused', requests: 0 });
    expect(formatPlan(plan)).toContain(`43114/${CONTRACT}: refused, its configured start (startTimestamp 2025-09-01T00:00:00Z) is block ${sep}, below block ${start}`);
    // The CLI's dry run ends as the run would: not as a plan that would succeed.
    const file = join(tmp(), 'sep.yaml');
    writeFileSync(file, `name: sep\nsources:\n  data: { url: "${s.url}" }\nstreams:\n  - { table: erc_transfers, chainId: "43114", contracts: ["${CONTRACT}"], startTimestamp: 2025-09-01, endTimestamp: 2025-11-01 }\n`);
    const dry = await cliHere(['run', file, '--dry-run', '--lake', lake]);
    expect(dry.code).toBe(1);
    expect(dry.stdout).toContain(`43114/${CONTRACT}: refused, its configured start`);
    expect(dry.stderr).toBe(`chainlake: a run would refuse this partition (its start below what the lake fetched, above): erc_transfers 43114/${CONTRACT}\n`);
    // Another lake, where September's block is not known yet: the dry run says what the run will decide.
    const other = tmp();
    expect((await runPipeline(october, { lake: other, logger: quiet })).status).toBe('ok');
    expect(planRun(september, { lake: other }).streams[0]!.partitions[0]!.from).toContain(`unless the first block at or after 2025-09-01T00:00:00Z is below block ${start}, where the blocks this lake fetched of it begin: the run then refuses the partition`);

    // A lake written before chainlake recorded where the fetched blocks begin: its files' names say
    // where its windows began, and the run refuses alike.
    const old = tmp();
    expect((await runPipeline(october, { lake: old, logger: quiet })).status).toBe('ok');
    const stateFile = join(old, '_state', 'erc_transfers', readdirSync(join(old, '_state', 'erc_transfers')).find((f) => f.endsWith('.json'))!);
    const { from: _, ...unrecorded } = JSON.parse(readFileSync(stateFile, 'utf8')) as Record<string, unknown>;
    writeFileSync(stateFile, JSON.stringify(unrecorded));
    const oldRun = await runPipeline(september, { lake: old, logger: quiet });
    expect(oldRun.streams[0]!.errors).toEqual([expect.stringContaining(`is block ${sep}, below block ${start} where the blocks this lake fetched of it begin`)]);

    // A full refresh fetches from the new start: September and October, as a lake made so from the first.
    expect((await runPipeline(september, { lake, logger: quiet, fullRefresh: ['erc_transfers'] })).status).toBe('ok');
    expect(new StateStore(lake).statesOf('erc_transfers')[0]!.from).toBe(sep);
    const fresh = tmp();
    expect((await runPipeline(september, { lake: fresh, logger: quiet })).status).toBe('ok');
    const all = 'SELECT tx_hash, log_index, token_id FROM erc_transfers ORDER BY ALL';
    expect(await lakeRows(lake, all)).toEqual(await lakeRows(fresh, all));
    expect(await count(lake)).toBeGreaterThan(rows);
    expect((await runPipeline(september, { lake, logger: quiet })).status).toBe('ok');

    // A start past the cursor: the window jumps there, and the fetched blocks begin there (back
    // to October would leave the blocks between unfetched, so it is refused).
    const gap = tmp();
    expect((await runPipeline(pipeline(s.url, 'startTimestamp: 2025-10-01\nendTimestamp: 2025-10-15'), { lake: gap, logger: quiet })).status).toBe('ok');
    const twentieth = firstBlockAt(Date.UTC(2025, 9, 20) / 1000);
    expect((await runPipeline(pipeline(s.url, 'startTimestamp: 2025-10-20'), { lake: gap, logger: quiet })).status).toBe('ok');
    expect(new StateStore(gap).statesOf('erc_transfers')[0]!.from).toBe(twentieth);
    const back = await runPipeline(pipeline(s.url, 'startTimestamp: 2025-10-01'), { lake: gap, logger: quiet });
    expect(back.streams[0]!.errors[0]).toContain(`is block ${start}, below block ${twentieth} where the blocks this lake fetched of it begin`);
  });

  it('a series is fetched once from the earlier start, merged by key: as a lake fetched from it at first', async () => {
    const metrics = (start: string) =>
      parsePipeline(`name: m\nsources:\n  metrics: { url: "${s.url}" }\nstreams:\n  - { table: chain_metrics, chainIds: ["43114"], metrics: [txCount], timeInterval: day, startTimestamp: ${start} }\n`, 'm.yaml');
    const lake = tmp();
    expect((await runPipeline(metrics('2025-10-01'), { lake, logger: quiet })).status).toBe('ok');
    expect(new StateStore(lake).statesOf('chain_metrics')[0]!.from).toBe(OCTOBER);
    const points = 'SELECT timestamp, value FROM chain_metrics ORDER BY ALL';
    const october = await lakeRows(lake, points);
    expect(planRun(metrics('2025-09-01'), { lake }).streams[0]!.partitions[0]!.from).toBe('from its configured start, 2025-09-01 00:00: before 2025-10-01 00:00, where the points this lake fetched of it begin (merged by key)');
    const r = await runPipeline(metrics('2025-09-01'), { lake, logger: quiet });
    expect(r.status).toBe('ok');
    expect(r.streams[0]!.notes).toEqual(['43114/txCount/day: its configured start 2025-09-01T00:00:00Z is before 2025-10-01T00:00:00Z, where the points this lake fetched of it begin: fetched from that start, merged by key']);
    expect(new StateStore(lake).statesOf('chain_metrics')[0]!.from).toBe(SEPTEMBER);
    const fresh = tmp();
    expect((await runPipeline(metrics('2025-09-01'), { lake: fresh, logger: quiet })).status).toBe('ok');
    const both = await lakeRows(lake, points);
    expect(both).toEqual(await lakeRows(fresh, points));
    expect(both.length).toBeGreaterThan(october.length + 29);
    // Then from its newest point again, as before.
    expect(planRun(metrics('2025-09-01'), { lake }).streams[0]!.partitions[0]!.start).toBe('resume');
  });
});

describe('dates on a lake on S3', () => {
  it("the record of block times travels with the lake's states: a rerun from another work folder asks no block, readers read the lake", async () => {
    const { startS3, s3Env, useEnv, BUCKET } = await import('../s3-fixture.js');
    const store = await startS3();
    stops.push(() => store.close());
    const restore = useEnv(s3Env(store.endpoint, { cache: tmp() }));
    stops.push(restore);
    const proxy = await proxied();
    const lake = `s3://${BUCKET}/dates`;
    const bounds = 'startTimestamp: 2025-10-01\nendTimestamp: 2025-11-01';
    expect((await runPipeline(pipeline(proxy.url, bounds), { lake, logger: quiet })).status).toBe('ok');
    expect(proxy.requests.filter((q) => oneBlock(q.url)).length).toBeGreaterThan(0);

    // A reader's copy of the lake: the record is no partition state.
    const { readableLake } = await import('../../src/state/cache.js');
    const copy = await readableLake(lake, { data: true });
    expect((await lakeContents(copy)).erc_transfers!.length).toBeGreaterThan(10);

    // Another machine (a work folder of its own) runs a token more: the blocks come from the store.
    restore();
    stops.push(useEnv(s3Env(store.endpoint, { cache: tmp() })));
    proxy.requests.length = 0;
    expect((await runPipeline(pipeline(proxy.url, bounds, [CONTRACT, OTHER]), { lake, logger: quiet })).status).toBe('ok');
    expect(proxy.requests.filter((q) => q.url.includes(OTHER)).length).toBeGreaterThan(0);
    expect(proxy.requests.filter((q) => oneBlock(q.url))).toEqual([]);
  });
});
