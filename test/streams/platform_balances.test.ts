// The P-Chain balance tables (platform_balances, platform_utxos: snapshots) against the simulator's
// P-Chain world: each snapshot compared row for row with what the world holds, the balances equal
// to the sums of the UTXOs by category, the UTXOs agreeing with platform_outputs, a rerun adding a
// snapshot and changing nothing else, and every answer accepted by the official client's schemas.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPipeline, loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import type { StreamConfig } from '../../src/decl/stream.js';
import { rebuildTable } from '../../src/pipeline/rebuild.js';
import { runPipeline } from '../../src/pipeline/run.js';
import type { RunReport } from '../../src/pipeline/report.js';
import { BALANCE_CATEGORIES, balancesOf, utxosOf } from '../../src/simulator/platform_balances.js';
import { P_CHAIN_ID, PRIMARY_DEMO, type PChainUtxo } from '../../src/simulator/primary.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { addressBody } from '../../src/simulator/staking.js';
import { DEMO } from '../../src/simulator/world.js';
import { platformUtxos } from '../../src/streams/platform_utxos.js';
import { officialProblems } from '../official.js';
import { expectCleanRun, lakeRows as rows, line, quiet, scriptedServer, sorted, runAtTimes } from '../helpers.js';

const DAY = 86_400;
const tmp = () => mkdtempSync(join(tmpdir(), 'cl-pbalances-'));
const [A, B] = PRIMARY_DEMO.addresses;
const SEED = 7;
const HISTORICAL = DEMO.now - 5 * DAY;
const MIN = 500_000_000_000_000n;
const BALANCES = '/v1/networks/mainnet/blockchains/p-chain/balances';
const UTXOS = '/v1/networks/mainnet/blockchains/p-chain/utxos';

const STREAMS: StreamConfig[] = [
  { table: 'platform_balances', network: 'mainnet', addresses: [A, B] },
  { table: 'platform_balances', network: 'mainnet', addresses: [A], blockTimestamp: HISTORICAL },
  // Every unspent UTXO of A (many pages); B's large ones, spent too, in small pages.
  { table: 'platform_utxos', network: 'mainnet', addresses: [A] },
  { table: 'platform_utxos', network: 'mainnet', addresses: [B], includeSpent: true, minUtxoAmount: String(MIN), sortBy: 'amount', pageSize: 7 },
  // A's whole history of emitted UTXOs, to hold its UTXOs against.
  { table: 'platform_outputs', network: 'mainnet', addresses: [A] },
];

function pipeline(url: string): Pipeline {
  const p = loadPipeline('pipelines/demo.yaml');
  for (const s of Object.values(p.sources)) s.url = url;
  p.streams = STREAMS;
  return p;
}

const BALANCE_SQL = `SELECT epoch(snapshot_at)::BIGINT taken, address, epoch(balance_at)::BIGINT bat, category, asset_id, asset_name, asset_symbol, asset_denomination,
  asset_type, amount_raw, utxo_count, shared_with_chain_id, status FROM platform_balances`;
const balanceRow = (r: Record<string, any>) =>
  line(r.taken, r.address, r.bat, r.category, r.asset_id, r.asset_name, r.asset_symbol, r.asset_denomination, r.asset_type, r.amount_raw, r.utxo_count, r.shared_with_chain_id, r.status);

/** The rows a balance snapshot of `address` taken at wall time `taken` should hold, the world at `t`. */
function balanceLines(taken: number, address: string, t: number, balanceAt: number): string[] {
  const b = balancesOf(utxosOf(SEED, 'mainnet', [address], t).held, t);
  return BALANCE_CATEGORIES.flatMap((c) =>
    b[c].map((e) => line(taken, address, balanceAt, c, e.assetId, e.name, e.symbol, e.denomination, e.type, e.amount, e.utxoCount, e.sharedWithChainId, e.status)),
  );
}

const UTXO_SQL = `SELECT epoch(snapshot_at)::BIGINT taken, address, utxo_id, tx_hash, output_index, block_number, epoch(block_timestamp)::BIGINT bt, amount_raw, asset_id, asset_symbol,
  addresses, threshold, utxo_type, staked, platform_locktime, stakeable_locktime, epoch(utxo_start_timestamp)::BIGINT us, epoch(utxo_end_timestamp)::BIGINT ue, reward_type,
  created_on_chain_id, consumed_on_chain_id, spent, consuming_tx_hash, consuming_block_number, epoch(consuming_block_timestamp)::BIGINT cbt FROM platform_utxos`;
const utxoRow = (r: Record<string, any>) =>
  line(r.taken, r.address, r.utxo_id, r.tx_hash, r.output_index, r.block_number, r.bt, r.amount_raw, r.asset_id, r.asset_symbol, r.addresses, r.threshold, r.utxo_type,
    r.staked, r.platform_locktime, r.stakeable_locktime, r.us, r.ue, r.reward_type, r.created_on_chain_id, r.consumed_on_chain_id, r.spent, r.consuming_tx_hash,
    r.consuming_block_number, r.cbt);
const utxoLine = (taken: number, address: string, u: PChainUtxo) =>
  line(taken, address, u.utxoId, u.txHash, u.outputIndex, u.blockNumber, u.blockTimestamp, u.asset.amount, u.asset.assetId, u.asset.symbol, u.addresses, u.threshold,
    u.utxoType, u.staked, u.platformLocktime, u.stakeableLocktime, u.utxoStartTimestamp, u.utxoEndTimestamp, u.rewardType, u.createdOnChainId, u.consumedOnChainId,
    u.consumingTxHash !== undefined || u.consumingBlockTimestamp !== undefined, u.consumingTxHash, u.consumingBlockNumber, u.consumingBlockTimestamp);

/** What the two UTXO entries should land for a snapshot taken at `taken` of the world at `t`. */
function utxoLines(taken: number, t: number): string[] {
  const a = utxosOf(SEED, 'mainnet', [A], t);
  const b = utxosOf(SEED, 'mainnet', [B], t);
  return [
    ...a.held.map((u) => utxoLine(taken, A, u)),
    ...[...b.held, ...b.spent].filter((u) => BigInt(u.asset.amount) >= MIN).map((u) => utxoLine(taken, B, u)),
  ];
}

/** The balance category of a UTXO row at world time T, in SQL: what PChainBalance's descriptions say. */
const CATEGORY_SQL = (T: number) => `CASE
  WHEN consumed_on_chain_id <> '${P_CHAIN_ID}' THEN CASE WHEN platform_locktime > ${T} THEN 'atomicMemoryLocked' ELSE 'atomicMemoryUnlocked' END
  WHEN staked THEN CASE WHEN epoch(utxo_start_timestamp) > ${T} THEN 'pendingStaked' WHEN coalesce(stakeable_locktime, 0) > ${T} THEN 'lockedStaked' ELSE 'unlockedStaked' END
  WHEN platform_locktime > ${T} THEN 'lockedPlatform' WHEN coalesce(stakeable_locktime, 0) > ${T} THEN 'lockedStakeable' ELSE 'unlockedUnstaked' END`;

describe('P-Chain balances and UTXOs as snapshots', () => {
  const clock = { t: DEMO.now as number };
  let sim: Simulator;
  let lake: string;
  let p: Pipeline;
  const reports: RunReport[] = [];
  const runs: Array<{ taken: number; world: number }> = [];
  const wall0 = Math.floor(Date.now() / 1000);

  async function runAt(worldTime: number, wall: number): Promise<void> {
    reports.push(await runAtTimes(clock, worldTime, wall, () => runPipeline(p, { lake, logger: quiet })));
    runs.push({ taken: wall, world: worldTime });
  }

  beforeAll(async () => {
    sim = await startSimulator({ seed: SEED, worldNow: () => clock.t });
    lake = tmp();
    p = pipeline(sim.url);
    await runAt(DEMO.now, wall0);
    // The same world an hour of wall time later: a second snapshot, the same in all else.
    await runAt(DEMO.now, wall0 + 3600);
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('completes every partition without rejects or unknown fields, both runs', () => {
    for (const r of reports) expectCleanRun(r, { drift: false });
  });

  it('platform_balances: every entry of every category of each snapshot as the world holds it, amounts exact', async () => {
    const want = runs.flatMap(({ taken, world }) => [
      ...balanceLines(taken, A, world, taken),
      ...balanceLines(taken, B, world, taken),
      ...balanceLines(taken, A, HISTORICAL, HISTORICAL),
    ]);
    expect(sorted((await rows(lake, BALANCE_SQL)).map(balanceRow))).toEqual(sorted(want));
    // Staked, unstaked and atomic balances each; the sums pass 2^53 and keep their digits.
    const [k] = await rows(lake, `SELECT count(DISTINCT category) cats, count(*) FILTER (WHERE amount_raw::HUGEINT > 9007199254740992) big,
      count(*) FILTER (WHERE amount::VARCHAR <> amount_raw) inexact, typeof(any_value(amount)) t FROM platform_balances`);
    expect(Number(k!.cats)).toBeGreaterThanOrEqual(4);
    expect(Number(k!.big)).toBeGreaterThan(0);
    expect(k!.inexact).toBe('0');
    expect(k!.t).toBe('BIGNUM');
    // Five days earlier A held less.
    const [h] = await rows(lake, `SELECT sum(amount) FILTER (WHERE balance_at < snapshot_at) past, sum(amount) FILTER (WHERE balance_at = snapshot_at) now
      FROM platform_balances WHERE address = '${A}' AND epoch(snapshot_at) = ${wall0}`);
    expect(BigInt(h!.past)).toBeLessThan(BigInt(h!.now));
  });

  it('platform_utxos: every UTXO of each snapshot as the world holds it, spent ones with what spent them', async () => {
    const want = runs.flatMap(({ taken, world }) => utxoLines(taken, world));
    expect(sorted((await rows(lake, UTXO_SQL)).map(utxoRow))).toEqual(sorted(want));
    const [k] = await rows(lake, `SELECT count(*) FILTER (WHERE spent) spent, count(*) FILTER (WHERE staked) staked, count(*) FILTER (WHERE stakeable_locktime IS NOT NULL) stake_locked,
      count(*) FILTER (WHERE consumed_on_chain_id <> '${P_CHAIN_ID}') atomic, count(*) FILTER (WHERE reward_type IS NOT NULL) rewards,
      typeof(any_value(platform_locktime)) lt, typeof(any_value(amount)) amt FROM platform_utxos`);
    for (const c of ['spent', 'staked', 'stake_locked', 'atomic', 'rewards']) expect(Number(k![c]), c).toBeGreaterThan(0);
    expect([k!.lt, k!.amt]).toEqual(['DECIMAL(20,0)', 'BIGNUM']);
    // B's entry asked for pages of 7: its snapshot spans several.
    const b = reports[0]!.streams.filter((s) => s.table === 'platform_utxos');
    expect(b.reduce((n, s) => n + s.pages, 0)).toBeGreaterThan(10);
  });

  it('the balances are the sums of the UTXOs, category by category', async () => {
    // A's UTXO entry lists all it holds: grouped by the category each falls in, they are its balance rows.
    const fromUtxos = await rows(lake, `SELECT epoch(snapshot_at)::BIGINT taken, ${CATEGORY_SQL(DEMO.now)} category,
        CASE WHEN consumed_on_chain_id <> '${P_CHAIN_ID}' THEN consumed_on_chain_id END shared, sum(amount)::VARCHAR amount, count(*) n
      FROM platform_utxos WHERE address = '${A}' GROUP BY ALL`);
    const fromBalances = await rows(lake, `SELECT epoch(snapshot_at)::BIGINT taken, category, shared_with_chain_id shared, amount_raw amount, utxo_count n
      FROM platform_balances WHERE address = '${A}' AND balance_at = snapshot_at`);
    const l = (r: Record<string, any>) => line(r.taken, r.category, r.shared, r.amount, r.n);
    expect(fromUtxos.length).toBeGreaterThanOrEqual(4);
    expect(sorted(fromUtxos.map(l))).toEqual(sorted(fromBalances.map(l)));
  });

  it('the UTXOs held are the emitted UTXOs of the address\'s transactions not spent since (platform_outputs)', async () => {
    const body = addressBody(A);
    const held = await rows(lake, `SELECT utxo_id, amount_raw, utxo_type, staked FROM platform_utxos WHERE address = '${A}' AND epoch(snapshot_at) = ${wall0} AND NOT spent`);
    const outputs = await rows(lake, `SELECT utxo_id, amount_raw, utxo_type, staked FROM platform_outputs WHERE list_contains(addresses, '${body}')
      AND coalesce(epoch(utxo_end_timestamp) > ${DEMO.now} OR NOT staked, true)`);
    const l = (r: Record<string, any>) => line(r.utxo_id, r.amount_raw, r.utxo_type, r.staked);
    expect(held.length).toBeGreaterThan(1000);
    expect(sorted(held.map(l))).toEqual(sorted(outputs.map(l)));
  });

  it('a rerun adds a snapshot and changes nothing else; keys are unique', async () => {
    for (const [t, key] of [['platform_balances', 'address, balance_at, category, asset_id, shared_with_chain_id'], ['platform_utxos', 'address, utxo_id']]) {
      const [k] = await rows(lake, `SELECT count(*) n, count(DISTINCT (network, snapshot_at, ${key})) d, count(DISTINCT snapshot_at) snaps FROM ${t}`);
      expect(k!.n, t).toBe(k!.d);
      expect(Number(k!.snaps), t).toBe(2);
      const diff = await rows(lake, `(SELECT * EXCLUDE (snapshot_at) FROM ${t} WHERE epoch(snapshot_at) = ${wall0}) EXCEPT ALL (SELECT * EXCLUDE (snapshot_at) FROM ${t} WHERE epoch(snapshot_at) = ${wall0 + 3600})`);
      const diff2 = await rows(lake, `(SELECT * EXCLUDE (snapshot_at) FROM ${t} WHERE epoch(snapshot_at) = ${wall0 + 3600}) EXCEPT ALL (SELECT * EXCLUDE (snapshot_at) FROM ${t} WHERE epoch(snapshot_at) = ${wall0})`);
      // balance_at is the snapshot's time where no blockTimestamp was asked: the only other difference.
      if (t === 'platform_balances') {
        expect(diff.every((r) => Number(new Date(r.balance_at).getTime() / 1000) === wall0)).toBe(true);
        expect(diff.length).toBe(diff2.length);
      } else {
        expect(diff).toEqual([]);
        expect(diff2).toEqual([]);
      }
    }
    // A rerun within the same second replaces its snapshot: no row more.
    const before = await rows(lake, `SELECT (SELECT count(*) FROM platform_balances) b, (SELECT count(*) FROM platform_utxos) u`);
    await runAt(DEMO.now, wall0 + 3600);
    runs.pop();
    expect(await rows(lake, `SELECT (SELECT count(*) FROM platform_balances) b, (SELECT count(*) FROM platform_utxos) u`)).toEqual(before);
  });

  it('sql/platform_balances_latest.sql: each address at its newest snapshot, classes and total exact', async () => {
    const got = await rows(lake, readFileSync('sql/platform_balances_latest.sql', 'utf8'));
    const newest = Math.max(...runs.map((r) => r.taken));
    const want = [A, B].map((a) => {
      const b = balancesOf(utxosOf(SEED, 'mainnet', [a], DEMO.now).held, DEMO.now);
      const sum = (...cs: Array<keyof typeof b>) => cs.flatMap((c) => b[c]).reduce((n, e) => n + BigInt(e.amount), 0n);
      const utxos = BALANCE_CATEGORIES.flatMap((c) => b[c]).reduce((n, e) => n + e.utxoCount, 0);
      return line(a, newest, sum('unlockedUnstaked'), sum('unlockedStaked', 'lockedStaked', 'pendingStaked'), sum('lockedPlatform', 'lockedStakeable'),
        sum('atomicMemoryUnlocked', 'atomicMemoryLocked'), sum(...BALANCE_CATEGORIES), utxos);
    });
    const l = (r: Record<string, any>) =>
      line(r.address, new Date(r.snapshot_at).getTime() / 1000, r.navax_unlocked, r.navax_staked, r.navax_locked, r.navax_atomic, r.navax_total, r.utxos);
    expect(sorted(got.map(l))).toEqual(sorted(want));
  });

  it('a rebuild from the raw pages lands the same snapshots (the stamp travels with the items)', async () => {
    const all = (t: string) => rows(lake, `SELECT * FROM ${t} ORDER BY ALL`);
    for (const t of ['platform_balances', 'platform_utxos']) {
      const before = await all(t);
      const r = await rebuildTable(lake, t, { logger: quiet });
      expect(r.rows, t).toBe(before.length);
      expect(await all(t), t).toEqual(before);
    }
  });
});

describe('the simulator answers as production', () => {
  let sim: Simulator;
  const clock = { t: DEMO.now as number };
  beforeAll(async () => {
    sim = await startSimulator({ seed: 3, worldNow: () => clock.t });
  });
  afterAll(async () => {
    await sim?.close();
  });
  const get = async (path: string) => {
    const r = await fetch(sim.url + path);
    return { status: r.status, body: JSON.parse(await r.text()) as any };
  };
  const official = (route: string, body: unknown, what: string) => {
    const problems = officialProblems(route, body);
    if (problems) console.error(what, problems);
    expect(problems, what).toBe('');
  };

  it('every variant of balance and UTXO fits the official client schemas', async () => {
    const seen = new Set<string>();
    for (const a of PRIMARY_DEMO.addresses) {
      const b = await get(`${BALANCES}?addresses=${a}`);
      expect(b.status).toBe(200);
      official('primaryBalances', b.body, `balances ${a}`);
      for (const c of BALANCE_CATEGORIES) if (b.body.balances[c].length) seen.add(c);
      for (const spent of [false, true]) {
        let path: string | undefined = `${UTXOS}?addresses=${a}&includeSpent=${spent}&pageSize=100`;
        for (let n = 0; path && n < 40; n++) {
          const r = await get(path);
          expect(r.status).toBe(200);
          official('primaryUtxos', r.body, path);
          for (const u of r.body.utxos) seen.add(`${u.utxoType}:${u.staked}:${u.stakeableLocktime !== undefined}:${u.consumedOnChainId === P_CHAIN_ID}:${u.consumingTxHash !== undefined}:${u.rewardType ?? ''}`);
          path = r.body.nextPageToken ? `${UTXOS}?addresses=${a}&includeSpent=${spent}&pageSize=100&pageToken=${r.body.nextPageToken}` : undefined;
        }
      }
    }
    // Both addresses at once, and the world a month on: stakes have ended (spent at their end, no consuming transaction).
    official('primaryBalances', (await get(`${BALANCES}?addresses=${PRIMARY_DEMO.addresses.join(',')}`)).body, 'balances of both');
    clock.t = DEMO.now + 30 * DAY;
    try {
      const r = await get(`${UTXOS}?addresses=${A}&includeSpent=true&pageSize=100&sortBy=amount&sortOrder=desc`);
      official('primaryUtxos', r.body, 'a month on');
      const ended = utxosOf(3, 'mainnet', [A], clock.t).spent.filter((u) => u.staked);
      expect(ended.length).toBeGreaterThan(0);
      expect(ended.every((u) => u.consumingTxHash === undefined && u.consumingBlockTimestamp === u.utxoEndTimestamp && u.utxoEndTimestamp! <= clock.t)).toBe(true);
      expect(utxosOf(3, 'mainnet', [A], clock.t).held.some((u) => u.staked && u.utxoEndTimestamp! <= clock.t)).toBe(false);
    } finally {
      clock.t = DEMO.now;
    }
    expect([...seen].filter((s) => BALANCE_CATEGORIES.includes(s as never)).sort()).toEqual(['atomicMemoryUnlocked', 'lockedStaked', 'unlockedStaked', 'unlockedUnstaked']);
    expect(seen).toContain('STAKE:true:true:true:false:');
    expect(seen).toContain('STAKE:true:false:true:false:');
    expect(seen).toContain('TRANSFER:false:false:false:false:');
    expect(seen).toContain('TRANSFER:false:false:true:true:');
    expect([...seen].some((s) => /:(VALIDATOR|DELEGATOR)$/.test(s))).toBe(true);
  });

  it('filters and orders as asked, and pages without loss', async () => {
    const all: any[] = [];
    let path: string | undefined = `${UTXOS}?addresses=${A}&pageSize=100&sortBy=amount&sortOrder=asc&minUtxoAmount=${MIN}`;
    while (path) {
      const r = await get(path);
      all.push(...r.body.utxos);
      path = r.body.nextPageToken ? `${UTXOS}?addresses=${A}&pageSize=100&sortBy=amount&sortOrder=asc&minUtxoAmount=${MIN}&pageToken=${r.body.nextPageToken}` : undefined;
    }
    const amounts = all.map((u) => BigInt(u.asset.amount));
    expect(amounts.every((x) => x >= MIN)).toBe(true);
    expect(amounts).toEqual([...amounts].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
    expect(sorted(all.map((u) => u.utxoId))).toEqual(sorted(utxosOf(3, 'mainnet', [A], DEMO.now).held.filter((u) => BigInt(u.amount) >= MIN).map((u) => u.utxoId)));
    const byTime = (await get(`${UTXOS}?addresses=${A}&pageSize=50`)).body.utxos.map((u: any) => u.blockTimestamp);
    expect(byTime).toEqual([...byTime].sort((x: number, y: number) => y - x));
    expect((await get(`${UTXOS}?addresses=${A}&assetId=U8iRqJoiJm8xZHAacmvYyZVwqQx6uDNtQeP3CQ6fcgQk3JqnK`)).body.utxos).toEqual([]);
    // Before the address's first transaction it held nothing.
    const empty = (await get(`${BALANCES}?addresses=${A}&blockTimestamp=1000`)).body;
    expect(BALANCE_CATEGORIES.every((c) => empty.balances[c].length === 0)).toBe(true);
    official('primaryBalances', empty, 'empty balances');
  });

  it('answers 400 naming the parameter', async () => {
    const cases: Array<[string, RegExp]> = [
      [BALANCES, /^addresses is required/],
      [`${BALANCES}?addresses=P-fuji1xyz`, /^addresses: "P-fuji1xyz"/],
      [`${BALANCES}?addresses=${A}&blockTimestamp=soon`, /^blockTimestamp must be an integer/],
      [`${UTXOS}?addresses=${A}&includeSpent=yes`, /^includeSpent must be true or false/],
      [`${UTXOS}?addresses=${A}&sortBy=size`, /^sortBy must be one of: timestamp, amount/],
      [`${UTXOS}?addresses=${A}&sortOrder=up`, /^sortOrder must be one of: asc, desc/],
      [`${UTXOS}?addresses=${A}&minUtxoAmount=-1`, /^minUtxoAmount must be a non-negative number/],
      [`${UTXOS}?addresses=${A}&assetId=AVAX`, /^assetId must be an asset id/],
      [`${UTXOS}?addresses=${A}&pageSize=101`, /^pageSize must not be greater than 100/],
      [`${UTXOS}?addresses=${A}&pageToken=nope`, /pageToken/],
      ['/v1/networks/moonnet/blockchains/p-chain/utxos', /^network must be one of/],
      ['/v1/networks/mainnet/blockchains/q-chain/balances', /^blockchainId must be one of/],
    ];
    for (const [path, message] of cases) {
      const r = await get(path);
      expect(r.status, path).toBe(400);
      expect(r.body.message, path).toMatch(message);
    }
  });
});

describe('answers the service should not send', () => {
  const ASSET = { assetId: 'FvwEAhmxKfeiG8SnEvq42hc6whRyY3EFYAvebMqDNDGCgxN5Z', name: 'Avalanche', symbol: 'AVAX', denomination: 9, type: 'secp256k1' };
  const CHAIN = '"chainInfo":{"chainName":"p-chain","network":"mainnet"}';
  // Written as text: uint64 locktimes past 2^53 as production would send them, JSON numbers.
  const UTXO = `{"addresses":["${addressBody(A)}"],"asset":${JSON.stringify({ ...ASSET, amount: '123456789012345678' })},"consumedOnChainId":"${P_CHAIN_ID}",
    "createdOnChainId":"${P_CHAIN_ID}","utxoId":"2Z5SvJWzpUarqbiTs2zYbbdAyorzf6jqgpxQfWztMENvMbfnVo","amount":"123456789012345678","assetId":"${ASSET.assetId}",
    "blockNumber":"21400001","blockTimestamp":1761000000,"outputIndex":0,"txHash":"2Z5SvJWzpUarqbiTs2zYbbdAyorzf6jqgpxQfWztMENvMbfnVo","utxoType":"TRANSFER",
    "threshold":1,"platformLocktime":18446744073709551615,"stakeableLocktime":9007199254740993,"staked":false}`;
  let body: Record<string, string> = {};
  let service: Awaited<ReturnType<typeof scriptedServer>>;
  beforeAll(async () => {
    service = await scriptedServer((req, res) => {
      const which = /\/(balances|utxos)\?/.exec(req.url ?? '')![1]!;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body[which]);
    });
  });
  afterAll(() => service?.close());
  const run = (table: string) => {
    const p = checkPipeline({ name: 'x', sources: { data: { url: service.url, retries: 0 } }, streams: [{ table, network: 'mainnet', addresses: [A] }] }, 'x.yaml');
    const lake = tmp();
    return runPipeline(p, { lake, logger: quiet }).then((report) => ({ report, lake }));
  };

  it('lands uint64 locktimes past 2^53 exactly', async () => {
    body = { utxos: `{"utxos":[${UTXO}],${CHAIN}}` };
    const { report, lake } = await run('platform_utxos');
    expectCleanRun(report, { drift: false });
    const [r] = await rows(lake, `SELECT platform_locktime::VARCHAR pl, stakeable_locktime::VARCHAR sl, amount_raw FROM platform_utxos`);
    expect(r).toEqual({ pl: '18446744073709551615', sl: '9007199254740993', amount_raw: '123456789012345678' });
  });

  it('lands a category it does not know under its name, and stops at another chain\'s answer or a category that is not a list', async () => {
    const entry = JSON.stringify({ ...ASSET, amount: '42', utxoCount: 1 });
    const empty = '"unlockedStaked":[],"lockedPlatform":[],"lockedStakeable":[],"lockedStaked":[],"pendingStaked":[],"atomicMemoryUnlocked":[],"atomicMemoryLocked":[]';
    body = { balances: `{"balances":{"unlockedUnstaked":[${entry}],${empty},"frozen":[${entry}]},${CHAIN}}` };
    const ok = await run('platform_balances');
    expectCleanRun(ok.report, { drift: false });
    expect((await rows(ok.lake, `SELECT category, amount_raw FROM platform_balances ORDER BY 1`)).map((r) => line(r.category, r.amount_raw))).toEqual(['frozen|42', 'unlockedUnstaked|42']);
    body = { balances: `{"balances":{"locked":[],"unlocked":[${entry}]},"chainInfo":{"chainName":"x-chain","network":"mainnet"}}` };
    const x = await run('platform_balances');
    expect(x.report.status).toBe('failed');
    expect(x.report.streams[0]!.errors.join()).toMatch(/chainInfo\.chainName is "x-chain", not "p-chain"/);
    body = { balances: `{"balances":{"unlockedUnstaked":{"amount":"42"}},${CHAIN}}` };
    const bad = await run('platform_balances');
    expect(bad.report.status).toBe('failed');
    expect(bad.report.streams[0]!.errors.join()).toMatch(/balances\.unlockedUnstaked is not a list/);
  });
});

describe('configuration of the balance tables', () => {
  const check = (stream: Record<string, unknown>) => () => checkPipeline({ name: 'x', streams: [stream] }, 'x.yaml');

  it('names the option and the stream of every bad value', () => {
    expect(check({ table: 'platform_balances', network: 'mainnet' })).toThrow(/x\.yaml: streams\[0\]\.addresses: is required for platform_balances/);
    expect(check({ table: 'platform_balances', addresses: [A] })).toThrow(/streams\[0\]\.network: is required for platform_balances/);
    expect(check({ table: 'platform_balances', network: 'fuji', addresses: [A] })).toThrow(/streams\[0\]\.addresses\[0\]: "P-avax1.*" is not a fuji P-\/X-chain address/);
    expect(check({ table: 'platform_balances', network: 'mainnet', addresses: [A], blockTimestamp: -1 })).toThrow(/streams\[0\]\.blockTimestamp: -1 is not Unix seconds from 2009-01-01 to 2100-01-01/);
    expect(check({ table: 'platform_utxos', network: 'mainnet', addresses: ['0x12'] })).toThrow(/streams\[0\]\.addresses\[0\]: "0x12" is not a mainnet P-\/X-chain address/);
    expect(check({ table: 'platform_utxos', network: 'mainnet', addresses: [A], minUtxoAmount: 5 })).toThrow(/streams\[0\]\.minUtxoAmount: must be a non-empty string, not 5/);
    expect(check({ table: 'platform_utxos', network: 'mainnet', addresses: [A], minUtxoAmount: '1.5' })).toThrow(/streams\[0\]\.minUtxoAmount: "1\.5" is not an amount in nAVAX/);
    expect(check({ table: 'platform_utxos', network: 'mainnet', addresses: [A], assetId: 'AVAX' })).toThrow(/streams\[0\]\.assetId: "AVAX" is not an asset id/);
    expect(check({ table: 'platform_utxos', network: 'mainnet', addresses: [A], sortBy: 'size' })).toThrow(/streams\[0\]\.sortBy: "size" is not one of timestamp, amount/);
    expect(check({ table: 'platform_utxos', network: 'mainnet', addresses: [A], includeSpent: 'yes' })).toThrow(/streams\[0\]\.includeSpent: must be/);
    expect(check({ table: 'platform_utxos', network: 'mainnet', addresses: [A], pageSize: 101 })).toThrow(/streams\[0\]\.pageSize/);
  });

  it('sends what the pipeline asks: an address a partition, filters in the query, amounts as written', () => {
    const p = checkPipeline({ name: 'x', streams: [{ table: 'platform_utxos', network: 'mainnet', addresses: [A, B], includeSpent: true, minUtxoAmount: '9007199254740993' }] }, 'x.yaml');
    const parts = platformUtxos.partitions(p.streams[0]!);
    expect(parts.map((x) => x.query)).toEqual([
      { addresses: A, includeSpent: 'true', minUtxoAmount: '9007199254740993' },
      { addresses: B, includeSpent: 'true', minUtxoAmount: '9007199254740993' },
    ]);
    expect(parts[0]!.path).toEqual({ network: 'mainnet', blockchainId: 'p-chain' });
    expect(new Set(parts.map((x) => x.id)).size).toBe(2);
  });
});
