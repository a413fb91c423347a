// The ICM tables (icm_messages, icm_metrics) and the AVAX supply: pipelines run in-process against
// the simulator, each table compared row for row with what its world served; messages that move
// from pending to delivered update their rows, a rerun adds nothing; every page the simulator
// serves passes the official client's response schemas.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkPipeline, loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { newClients, newRun, runJobs, runPipeline } from '../../src/pipeline/run.js';
import { StateStore, TABLE_PARTITION } from '../../src/state/store.js';
import type { RunReport } from '../../src/pipeline/report.js';
import { SeriesListing, timeOf } from '../../src/pipeline/series.js';
import { icmMessages } from '../../src/streams/icm_messages.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { IcmWorld, icmAddresses, icmOf, type IcmMessage, type IcmQuery } from '../../src/simulator/icm.js';
import { DEMO } from '../../src/simulator/world.js';
import { expectCleanRun, lakeRows as rows, line, quiet, sorted } from '../helpers.js';
import { officialProblems } from '../official.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'cl-icm-'));
const TABLES = ['icm_messages', 'avax_supply', 'icm_metrics'];
const low = (a: string | undefined) => (a === undefined ? null : a.toLowerCase());
const LAKESIDE = 'MF7g5aBrhgBrhGMHrvfrQpub9gPy85CiA4suwzDcNedzcjKmy';

function demo(url: string): Pipeline {
  const p = loadPipeline('pipelines/demo.yaml');
  p.sources.data.url = url;
  p.sources.metrics.url = url;
  p.streams = p.streams.filter((s) => TABLES.includes(s.table));
  return p;
}

/** A served message as its row: every column, in the table's order. */
function messageLine(m: IcmMessage): string {
  const r = m.rewardDetails;
  const s = m.sourceTransaction;
  const d = m.destinationTransaction;
  return line(
    m.messageId, m.status, s?.timestamp ?? d!.timestamp, m.sourceBlockchainId, m.destinationBlockchainId, m.sourceEvmChainId, m.destinationEvmChainId,
    low(m.icmContractAddress), m.messageNonce, low(m.from), low(m.to), m.data, m.messageExecuted, m.receiptDelivered,
    m.receipts.map((x) => x.receivedMessageNonce), m.receipts.map((x) => x.relayerRewardAddress),
    low(r.address), r.name, r.symbol, r.decimals, r.logoUri, r.ercType, r.value, r.price?.currencyCode, r.price === undefined ? undefined : String(r.price.value),
    s?.txHash, s?.timestamp, s?.gasSpent, d?.txHash, d?.timestamp, d?.gasSpent, low(d?.rewardRedeemer), low(d?.delivererAddress),
  );
}

const MESSAGE_SQL = `SELECT message_id, status, epoch(message_timestamp)::BIGINT mt, source_blockchain_id, destination_blockchain_id, source_evm_chain_id, destination_evm_chain_id,
  icm_contract_address, message_nonce_raw, from_address, to_address, data, message_executed, receipt_delivered, receipt_message_nonces, receipt_relayer_reward_addresses,
  fee_token_address, fee_token_name, fee_token_symbol, fee_token_decimals, fee_token_logo_uri, fee_token_erc_type, fee_amount_raw, fee_price_currency, fee_price,
  source_tx_hash, epoch(source_timestamp)::BIGINT st, source_gas_spent_raw, destination_tx_hash, epoch(destination_timestamp)::BIGINT dt, destination_gas_spent_raw,
  destination_reward_redeemer, destination_deliverer_address FROM icm_messages`;

async function landedMessages(lake: string): Promise<string[]> {
  return (await rows(lake, MESSAGE_SQL)).map((r) => line(...Object.values(r)));
}

/** What the service lists at time t for the demo's two icm_messages entries, one row per message. */
function servedMessages(icm: IcmWorld, t: number, queries: IcmQuery[]): IcmMessage[] {
  const byId = new Map<string, IcmMessage>();
  for (const q of queries) for (const m of icm.list('mainnet', q, t)) byId.set(m.messageId, m);
  return [...byId.values()];
}

const DEMO_QUERIES: IcmQuery[] = [
  { sourceBlockchainId: LAKESIDE, destinationBlockchainId: '43114' },
  { address: icmAddresses('mainnet').recipients[0]!.toLowerCase() },
];

describe('the ICM tables and the AVAX supply on the demo pipeline', () => {
  let sim: Simulator;
  let lake: string;
  let report: RunReport;
  const answers: Array<{ route: string; body: unknown }> = [];

  beforeAll(async () => {
    sim = await startSimulator({ seed: 11, onAnswer: (a) => a.status === 200 && answers.push({ route: a.route, body: a.body }) });
    lake = tmp();
    report = await runPipeline(demo(sim.url), { lake, logger: quiet });
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('completes every partition without rejects or unread fields', () => expectCleanRun(report, { drift: false }));

  it('icm_messages: every message of both entries once, every column as served, amounts exact', async () => {
    const want = servedMessages(icmOf(sim.world), sim.world.now, DEMO_QUERIES);
    expect(new Set(want.map((m) => m.status))).toEqual(new Set(['pending', 'delivered', 'delivered_source_not_indexed']));
    const got = await landedMessages(lake);
    expect(got.length).toBe(want.length);
    expect(sorted(got)).toEqual(sorted(want.map(messageLine)));
    const [c] = await rows(lake, `SELECT count(*) n, count(DISTINCT message_id) ids,
        count(*) FILTER (WHERE length(fee_amount_raw) > 38 AND fee_amount::VARCHAR = ltrim(fee_amount_raw, '0')) over38,
        count(*) FILTER (WHERE length(fee_amount_raw) <= 38 AND fee_amount::VARCHAR <> fee_amount_raw) off_,
        count(*) FILTER (WHERE fee_price = '0.000000012345678901234567') dust FROM icm_messages`);
    expect(c!.n).toBe(c!.ids);
    expect(Number(c!.over38)).toBeGreaterThan(0);
    expect(c!.off_).toBe('0');
    expect(Number(c!.dust)).toBeGreaterThan(0);
    expect(report.streams.find((s) => s.table === 'icm_messages')!.over38).toBe(Number(c!.over38));
  });

  it('avax_supply: one snapshot, every amount the exact text served', async () => {
    const s = icmOf(sim.world).supply(sim.world.now);
    const got = await rows(lake, `SELECT epoch(last_updated)::BIGINT lu, last_updated_text, total_supply, circulating_supply, total_p_burned, total_c_burned, total_x_burned, total_staked, total_locked, total_rewards, genesis_unlock, l1_validator_fees FROM avax_supply`);
    expect(got).toEqual([{
      lu: String(Math.floor(Date.parse(s.lastUpdated) / 1000)), last_updated_text: s.lastUpdated, total_supply: s.totalSupply, circulating_supply: s.circulatingSupply,
      total_p_burned: s.totalPBurned, total_c_burned: s.totalCBurned, total_x_burned: s.totalXBurned, total_staked: s.totalStaked, total_locked: s.totalLocked,
      total_rewards: s.totalRewards, genesis_unlock: s.genesisUnlock, l1_validator_fees: s.l1ValidatorFees,
    }]);
    // More digits than a double keeps, and the DECIMAL a reader casts to keeps them all.
    expect(s.totalSupply.replace('.', '').length).toBeGreaterThan(17);
    const [cast] = await rows(lake, `SELECT rtrim(rtrim(CAST(CAST(total_supply AS DECIMAL(38,18)) AS VARCHAR), '0'), '.') = total_supply ok FROM avax_supply`);
    expect(cast!.ok).toBe(true);
  });

  it('icm_metrics: every point of the grouped daily series as served', async () => {
    const want = icmOf(sim.world).counts('mainnet', { groupBy: 'srcBlockchainId,destBlockchainId', timeInterval: 'day' }, sim.world.now).map((p) => line(p.timestamp, p.srcBlockchainId, p.destBlockchainId, p.value));
    const got = (await rows(lake, `SELECT epoch(timestamp)::BIGINT ts, src_blockchain_id, dest_blockchain_id, value::BIGINT v, group_by, network, time_interval FROM icm_metrics`));
    expect(sorted(got.map((r) => line(r.ts, r.src_blockchain_id, r.dest_blockchain_id, r.v)))).toEqual(sorted(want));
    expect(new Set(got.map((r) => line(r.group_by, r.network, r.time_interval)))).toEqual(new Set([line('srcBlockchainId,destBlockchainId', 'mainnet', 'day')]));
    expect(want.length).toBeGreaterThan(20);
  });

  it("serves every page in a shape the official client's validators accept (pending, delivered and source-not-indexed messages)", () => {
    const routes = new Set(answers.map((a) => a.route));
    expect(routes).toEqual(new Set(['icmMessages', 'icmAddressMessages', 'avaxSupply', 'icmTimeseries']));
    const statuses = new Set(answers.flatMap((a) => ((a.body as { messages?: IcmMessage[] }).messages ?? []).map((m) => m.status)));
    expect(statuses).toEqual(new Set(['pending', 'delivered', 'delivered_source_not_indexed']));
    expect(answers.map((a) => officialProblems(a.route, a.body)).filter(Boolean)).toEqual([]);
  });

  it('a rerun adds nothing to the messages or the series, and a snapshot to the supply', async () => {
    const before = await landedMessages(lake);
    const series = await rows(lake, 'SELECT count(*) n FROM icm_metrics');
    const real = Date.now.bind(Date);
    // Another second on chainlake's clock, so the snapshot is a new one.
    const spy = vi.spyOn(Date, 'now').mockImplementation(() => real() + 5_000);
    try {
      const second = await runPipeline(demo(sim.url), { lake, logger: quiet });
      expect(second.status).toBe('ok');
    } finally {
      spy.mockRestore();
    }
    expect(sorted(await landedMessages(lake))).toEqual(sorted(before));
    expect(await rows(lake, 'SELECT count(*) n FROM icm_metrics')).toEqual(series);
    const snaps = await rows(lake, 'SELECT count(*) n, count(DISTINCT snapshot_at) d, count(DISTINCT total_supply) v FROM avax_supply');
    expect(snaps).toEqual([{ n: '2', d: '2', v: '1' }]);
  });
});

describe('icm_messages as time passes', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (closers.length) await closers.pop()!();
  });

  it('pages back only to the oldest message still pending, updates the messages delivered since, and a rerun adds nothing', async () => {
    const clock = { t: DEMO.now as number };
    const sim = await startSimulator({ seed: 1, worldNow: () => clock.t });
    closers.push(() => sim.close());
    const dst = '43114';
    const pageSize = 10;
    const p = checkPipeline({ name: 'icm', sources: { data: { url: sim.url } }, streams: [{ table: 'icm_messages', network: 'mainnet', destinationBlockchainId: dst, pageSize }] }, 'icm.yaml');
    const icm = icmOf(sim.world);
    const lake = tmp();
    const first = await runPipeline(p, { lake, logger: quiet });
    expectCleanRun(first);
    const t0 = clock.t;
    const at0 = icm.list('mainnet', { destinationBlockchainId: dst }, t0);
    expect(sorted(await landedMessages(lake))).toEqual(sorted(at0.map(messageLine)));

    clock.t += 86_400;
    const t1 = clock.t;
    const second = await runPipeline(p, { lake, logger: quiet });
    expectCleanRun(second);
    const at1 = icm.list('mainnet', { destinationBlockchainId: dst }, t1);
    // Every message as the service has it now: new ones added, pending ones delivered since updated.
    expect(sorted(await landedMessages(lake))).toEqual(sorted(at1.map(messageLine)));
    const pending0 = new Set(at0.filter((m) => m.status === 'pending').map((m) => m.messageId));
    const deliveredSince = at1.filter((m) => pending0.has(m.messageId) && m.status !== 'pending');
    expect(deliveredSince.length).toBeGreaterThan(0);
    // Among them one older than the newest message of the first run: found only by paging back to it.
    const newest0 = Math.max(...at0.map(IcmWorld.listedAt));
    expect(deliveredSince.some((m) => IcmWorld.listedAt(m) < newest0)).toBe(true);

    // It paged until the first page older than the oldest message pending at the first run, no further.
    const hold = Math.min(newest0, ...at0.filter((m) => m.status === 'pending').map(IcmWorld.listedAt));
    const firstOlder = at1.findIndex((m) => IcmWorld.listedAt(m) < hold);
    const pages = firstOlder < 0 ? Math.ceil(at1.length / pageSize) : Math.floor(firstOlder / pageSize) + 1;
    expect(second.streams[0]!.pages).toBe(pages);
    expect(pages).toBeLessThan(Math.ceil(at1.length / pageSize));

    const third = await runPipeline(p, { lake, logger: quiet });
    expect(third.status).toBe('ok');
    expect(sorted(await landedMessages(lake))).toEqual(sorted(at1.map(messageLine)));
    const [k] = await rows(lake, 'SELECT count(*) n, count(DISTINCT message_id) d FROM icm_messages');
    expect(k!.n).toBe(k!.d);
  });

  it('a run whose merge into the table did not happen keeps its partitions at their cursor: the next run lands every message', async () => {
    const clock = { t: DEMO.now as number };
    const sim = await startSimulator({ seed: 1, worldNow: () => clock.t });
    closers.push(() => sim.close());
    const dst = '43114';
    const p = checkPipeline({ name: 'icm', sources: { data: { url: sim.url } }, streams: [{ table: 'icm_messages', network: 'mainnet', destinationBlockchainId: dst, pageSize: 10 }] }, 'icm.yaml');
    const lake = tmp();
    // The table's commit refused, as a run killed after its partitions committed would leave it.
    const refuse = <T>(_table: string, partition: string, change: () => Promise<T>): Promise<T> => (partition === TABLE_PARTITION ? Promise.reject(new Error('no table commit')) : change());
    const store = new StateStore(lake, { guard: refuse });
    const { jobs, report } = newRun(p, lake);
    await runJobs(jobs, store, newClients(p, { logger: quiet }), { logger: quiet, runId: 'cut' });
    expect(report.streams[0]!.errors.join(' ')).toMatch(/merge into icm_messages: .*no table commit/);
    const parts = store.all().filter((st) => st.table === 'icm_messages' && st.partition !== TABLE_PARTITION);
    expect(parts.length).toBeGreaterThan(0);
    for (const st of parts) expect(st.cursor.newest, st.partition).toBeUndefined();
    clock.t += 3600;
    expectCleanRun(await runPipeline(p, { lake, logger: quiet }));
    expect(sorted(await landedMessages(lake))).toEqual(sorted(icmOf(sim.world).list('mainnet', { destinationBlockchainId: dst }, clock.t).map(messageLine)));
    for (const st of new StateStore(lake).all().filter((x) => x.table === 'icm_messages' && x.partition !== TABLE_PARTITION)) expect(st.cursor.newest, st.partition).toBeDefined();
  });

  it('holds its cursor at the oldest unsettled item, and reads the time from the first present dotted path', () => {
    const t = timeOf(icmMessages)!;
    expect(t({ sourceTransaction: { timestamp: 50 }, destinationTransaction: { timestamp: 70 } })).toBe(50);
    expect(t({ destinationTransaction: { timestamp: 70 } })).toBe(70);
    expect(t({})).toBeNaN();
    const item = (ts: number, status: string) => ({ status, sourceTransaction: { timestamp: ts } });
    const l = new SeriesListing(100, false, t, icmMessages.timeCursor!.settled);
    expect(l.paged([item(300, 'delivered'), item(250, 'pending'), item(200, 'pending')], 'next', 3, 1000)).toEqual({ commit: false, stop: false });
    expect(l.paged([item(150, 'delivered'), item(90, 'delivered')], 'next', 5, 1000)).toEqual({ commit: true, stop: true });
    expect([l.top, l.point]).toEqual([300, 200]);
    const settled = new SeriesListing(100, false, t, icmMessages.timeCursor!.settled);
    settled.paged([item(300, 'delivered'), item(99, 'delivered_source_not_indexed')], undefined, 2, 1000);
    expect(settled.point).toBe(300);
  });
});

describe('configuration and simulator routes of the ICM tables', () => {
  const check = (stream: Record<string, unknown>) => () => checkPipeline({ name: 'x', streams: [stream] }, 'x.yaml');

  it('names the place of every bad value', () => {
    expect(check({ table: 'icm_messages' })).toThrow(/streams\[0\]\.network: is required for icm_messages/);
    expect(check({ table: 'icm_messages', network: 'mainnet', blockchainId: '43114' })).toThrow(/streams\[0\]\.blockchainId: "43114" is not a blockchain id/);
    expect(check({ table: 'icm_messages', network: 'mainnet', sourceBlockchainId: 'c-chain' })).toThrow(/streams\[0\]\.sourceBlockchainId: "c-chain" is not an EVM chain id/);
    expect(check({ table: 'icm_messages', network: 'mainnet', from: '0x12' })).toThrow(/streams\[0\]\.from: "0x12" is not an EVM address/);
    expect(check({ table: 'icm_messages', network: 'mainnet', addresses: ['0xnothex'] })).toThrow(/streams\[0\]\.addresses\[0\]: "0xnothex" is not an EVM address/);
    expect(check({ table: 'icm_messages', network: 'mainnet', addresses: [DEMO.internalAddresses[0]], to: DEMO.internalAddresses[1] })).toThrow(/streams\[0\]\.to: icm_messages takes either addresses or the filters/);
    expect(check({ table: 'icm_messages', network: 'mainnet', pageSize: 101 })).toThrow(/streams\[0\]\.pageSize: 101 is out of bounds for \/v1\/icm\/messages \(1 to 100\)/);
    expect(check({ table: 'avax_supply', network: 'mainnet' })).toThrow(/streams\[0\]\.network: unknown key for avax_supply/);
    expect(check({ table: 'icm_metrics', network: 'mainnet', srcBlockchainId: '43114' })).toThrow(/streams\[0\]\.srcBlockchainId: "43114" is not a blockchain id/);
    expect(check({ table: 'icm_metrics', network: 'mainnet', groupBy: 'route' })).toThrow(/streams\[0\]\.groupBy: "route" is not one of srcBlockchainId, destBlockchainId/);
  });

  it('filters as asked and answers a bad parameter with a 400 naming it', async () => {
    const sim = await startSimulator({ seed: 2 });
    const get = async (path: string) => {
      const r = await fetch(sim.url + path);
      return { status: r.status, body: (await r.json()) as any };
    };
    try {
      const icm = icmOf(sim.world);
      const [c, lake] = icm.chains('mainnet');
      const from = icmAddresses('mainnet').senders[1]!;
      const one = await get(`/v1/icm/messages?network=mainnet&pageSize=100&sourceBlockchainId=${lake!.evmChainId}&destinationBlockchainId=${c!.blockchainId}&from=${from.toLowerCase()}`);
      expect(one.body.messages.length).toBeGreaterThan(0);
      for (const m of one.body.messages) expect([m.sourceBlockchainId, m.destinationBlockchainId, m.from]).toEqual([lake!.blockchainId, c!.blockchainId, from]);
      const either = await get(`/v1/icm/messages?pageSize=100&blockchainId=${lake!.blockchainId}`);
      for (const m of either.body.messages) expect([m.sourceBlockchainId, m.destinationBlockchainId]).toContain(lake!.blockchainId);
      const fuji = await get('/v1/icm/messages?network=fuji&pageSize=5');
      expect(fuji.body.messages.every((m: IcmMessage) => icm.chains('fuji').some((x) => x.blockchainId === m.sourceBlockchainId))).toBe(true);
      expect((await get('/v1/icm/messages?pageSize=101')).body.message).toBe('pageSize must not be greater than 100');
      expect((await get('/v1/icm/messages?network=devnet')).body.message).toContain('network must be one of');
      expect((await get('/v1/icm/messages?from=0x12')).body.message).toContain('from must be 0x followed by 40 hex digits');
      expect((await get('/v1/icm/messages?blockchainId=43114')).body.message).toContain('blockchainId must be a base58 blockchain id');
      expect((await get('/v1/icm/addresses/0x12/messages')).body.message).toContain('address must be 0x');
      expect((await get('/v1/icm/messages?pageToken=nope')).status).toBe(400);
      // The metrics service sends its messages as a list.
      expect(String((await get('/v2/icm/timeseries?groupBy=route')).body.message)).toContain('groupBy must be one of');
      expect(String((await get('/v2/icm/timeseries?timeInterval=year')).body.message)).toContain('timeInterval must be one of');
      expect((await get('/v2/icm/timeseries?startTimestamp=10&endTimestamp=5')).status).toBe(400);
    } finally {
      await sim.close();
    }
  });
});
