// The platform-chain (P-Chain) tables of the data service: transactions by address or L1
// validation with their consumed and emitted UTXOs, and blocks, by time. Pipelines run in-process
// against the simulator; every table is compared row for row with what the simulator's world
// served, reruns add nothing, a moving clock adds only what is new, and the simulator's answers
// pass the official client's response schemas.
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListPChainTransactionsResponse$inboundSchema, ListPrimaryNetworkBlocksResponse$inboundSchema } from '@avalanche-sdk/chainkit/models/components';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPipeline, loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { parseExact } from '../../src/json.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { P_BLOCK_SECONDS, P_CHAIN_ID, PRIMARY_DEMO, UTXO_PAGE_LIMIT, primaryWorld, type PChainTransaction, type PChainUtxo, type PrimaryTxQuery } from '../../src/simulator/primary.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { DEMO } from '../../src/simulator/world.js';
import { StateStore } from '../../src/state/store.js';
import { expectCleanRun, lakeRows, line, quiet, sorted, runOnSimulator, simulatorRun, expectStillRerun } from '../helpers.js';

const TABLES = ['platform_transactions', 'platform_inputs', 'platform_outputs', 'platform_blocks'];
const tmp = () => mkdtempSync(join(tmpdir(), 'cl-platform-'));
const rows = lakeRows;
const TX_PATH = '/v1/networks/mainnet/blockchains/p-chain/transactions';
const BLOCKS_PATH = '/v1/networks/mainnet/blockchains/p-chain/blocks';

function demo(url: string): Pipeline {
  const p = loadPipeline('pipelines/demo.yaml');
  p.sources.data.url = url;
  p.streams = p.streams.filter((s) => TABLES.includes(s.table));
  return p;
}

/** The queries a platform stream entry sends: one per address and per L1 validation. */
function queriesOf(cfg: Record<string, unknown>): PrimaryTxQuery[] {
  const start = cfg.startTimestamp as number | undefined;
  const time = start === undefined ? {} : { startTimestamp: start };
  return [
    ...((cfg.addresses as string[] | undefined) ?? []).map((a) => ({ addresses: [a], ...time })),
    ...((cfg.l1ValidationIds as string[] | undefined) ?? []).map((v) => ({ l1ValidationId: v, ...time })),
  ];
}

const servedBefore = new Map<string, PChainTransaction[]>();

/**
 * Every transaction the queries list at t, once each; made once per file, as each transaction is
 * derived anew (hashes and all) at every call and the tests ask the same listings several times.
 */
function served(seed: number, queries: PrimaryTxQuery[], t: number): PChainTransaction[] {
  const key = JSON.stringify([seed, queries, t]);
  const known = servedBefore.get(key);
  if (known) return known;
  const byHash = new Map<string, PChainTransaction>();
  for (const q of queries) {
    const l = primaryWorld(seed).listTransactions('mainnet', q, t);
    for (let k = 0; k < l.length; k++) {
      const tx = l.at(k);
      byHash.set(tx.txHash, tx);
    }
  }
  const list = [...byHash.values()];
  servedBefore.set(key, list);
  return list;
}

const avax = (list: Array<{ amount: string }>) => (list.length ? list.reduce((n, a) => n + BigInt(a.amount), 0n).toString() : undefined);

const txLine = (t: PChainTransaction) =>
  line(t.txHash, t.txType, t.blockNumber, t.blockTimestamp, t.blockHash, avax(t.value), avax(t.amountBurned), avax(t.amountStaked), avax(t.amountL1ValidatorBalanceBurned),
    t.consumedUtxos.length, t.emittedUtxos.length, t.sourceChain, t.destinationChain, t.nodeId, t.subnetId, t.startTimestamp, t.endTimestamp, t.delegationFeePercent,
    t.estimatedReward, t.rewardAddresses, t.stakingTxHash, t.memo, t.l1ValidatorDetails?.map((d) => d.validationId), t.l1ValidatorManagerDetails?.contractAddress.toLowerCase(),
    t.subnetOwnershipInfo?.addresses, t.subnetOwnershipInfo?.threshold, t.blsCredentials?.publicKey, t.blockchainInfo?.chainName, t.blockchainInfo?.vmId,
    [...new Set([...t.consumedUtxos, ...t.emittedUtxos].flatMap((u) => u.addresses))].sort());
const TX_SQL = `SELECT tx_hash, tx_type, block_number, epoch(block_timestamp)::BIGINT ts, block_hash, value_raw, amount_burned_raw, amount_staked_raw, amount_l1_validator_balance_burned_raw,
  input_count, output_count, source_chain, destination_chain, node_id, subnet_id, epoch(start_timestamp)::BIGINT st, epoch(end_timestamp)::BIGINT et, delegation_fee_percent,
  estimated_reward_raw, reward_addresses, staking_tx_hash, memo, l1_validation_ids, l1_validator_manager_address, subnet_owner_addresses, subnet_owner_threshold,
  bls_public_key, blockchain_name, vm_id, addresses FROM platform_transactions`;
const txRow = (r: Record<string, any>) =>
  line(r.tx_hash, r.tx_type, r.block_number, r.ts, r.block_hash, r.value_raw, r.amount_burned_raw, r.amount_staked_raw, r.amount_l1_validator_balance_burned_raw,
    r.input_count, r.output_count, r.source_chain, r.destination_chain, r.node_id, r.subnet_id, r.st, r.et, r.delegation_fee_percent, r.estimated_reward_raw,
    r.reward_addresses, r.staking_tx_hash, r.memo, r.l1_validation_ids, r.l1_validator_manager_address, r.subnet_owner_addresses, r.subnet_owner_threshold,
    r.bls_public_key, r.blockchain_name, r.vm_id, r.addresses);

const utxoLine = (t: PChainTransaction, u: PChainUtxo) =>
  line(t.txHash, t.txType, t.blockTimestamp, u.utxoId, u.txHash, u.outputIndex, u.asset.amount, u.asset.assetId, u.addresses, u.threshold, u.utxoType, u.staked,
    u.platformLocktime, u.stakeableLocktime, u.utxoStartTimestamp, u.utxoEndTimestamp, u.rewardType, u.createdOnChainId, u.consumedOnChainId);
const utxoSql = (table: string, txOf: string, index: string) => `SELECT tx_hash, tx_type, epoch(block_timestamp)::BIGINT ts, utxo_id, ${txOf} utx, ${index} ix, amount_raw, asset_id, addresses,
  threshold, utxo_type, staked, platform_locktime, stakeable_locktime, epoch(utxo_start_timestamp)::BIGINT us, epoch(utxo_end_timestamp)::BIGINT ue, reward_type,
  created_on_chain_id, consumed_on_chain_id FROM ${table}`;
const utxoRow = (r: Record<string, any>) =>
  line(r.tx_hash, r.tx_type, r.ts, r.utxo_id, r.utx, r.ix, r.amount_raw, r.asset_id, r.addresses, r.threshold, r.utxo_type, r.staked, r.platform_locktime,
    r.stakeable_locktime, r.us, r.ue, r.reward_type, r.created_on_chain_id, r.consumed_on_chain_id);

const blockLine = (b: ReturnType<ReturnType<typeof primaryWorld>['block']>) =>
  line(b.blockNumber, b.blockHash, b.parentHash, b.blockTimestamp, b.blockType, b.txCount, b.transactions, b.blockSizeBytes, b.l1ValidatorsAccruedFees, b.activeL1Validators,
    b.currentSupply, b.proposerDetails?.proposerNodeId, b.proposerDetails?.proposerPChainHeight);
const BLOCK_SQL = `SELECT block_number, block_hash, parent_hash, epoch(block_timestamp)::BIGINT ts, block_type, tx_count, tx_hashes, block_size_bytes, l1_validators_accrued_fees_raw,
  active_l1_validators, current_supply_raw, proposer_node_id, proposer_p_chain_height FROM platform_blocks`;
const blockRow = (r: Record<string, any>) =>
  line(r.block_number, r.block_hash, r.parent_hash, r.ts, r.block_type, r.tx_count, r.tx_hashes, r.block_size_bytes, r.l1_validators_accrued_fees_raw,
    r.active_l1_validators, r.current_supply_raw, r.proposer_node_id, r.proposer_p_chain_height);

/** What the lake should hold after runs up to time t: every transaction, UTXO and block served. */
async function expectLakeAsServed(lake: string, p: Pipeline, seed: number, t: number): Promise<void> {
  const cfg = (table: string) => p.streams.find((s) => s.table === table)!;
  const txs = served(seed, queriesOf(cfg('platform_transactions')), t);
  expect(sorted((await rows(lake, TX_SQL)).map(txRow))).toEqual(sorted(txs.map(txLine)));
  const ins = served(seed, queriesOf(cfg('platform_inputs')), t).flatMap((x) => x.consumedUtxos.map((u) => utxoLine(x, u)));
  expect(sorted((await rows(lake, utxoSql('platform_inputs', 'spent_tx_hash', 'spent_output_index'))).map(utxoRow))).toEqual(sorted(ins));
  const outs = served(seed, queriesOf(cfg('platform_outputs')), t).flatMap((x) => x.emittedUtxos.map((u) => utxoLine(x, u)));
  expect(sorted((await rows(lake, utxoSql('platform_outputs', 'utxo_tx_hash', 'output_index'))).map(utxoRow))).toEqual(sorted(outs));
  const bl = primaryWorld(seed).listBlocks('mainnet', { startTimestamp: cfg('platform_blocks').startTimestamp as number }, t);
  const blocks = Array.from({ length: bl.length }, (_, k) => blockLine(bl.at(k)));
  expect(sorted((await rows(lake, BLOCK_SQL)).map(blockRow))).toEqual(sorted(blocks));
}

describe('platform-chain tables on the demo pipeline', () => {
  const seed = 11;
  const run = simulatorRun(seed, demo, 25);

  it('lands every transaction, consumed and emitted UTXO and block as served, amounts exact', async () => {
    await expectLakeAsServed(run.lake, run.p, seed, DEMO.now);
    const [t] = await rows(run.lake, `SELECT count(*) n, count(DISTINCT tx_type) ntypes, count(*) FILTER (WHERE amount_staked IS NOT NULL) staked,
      count(*) FILTER (WHERE value::VARCHAR <> value_raw OR amount_burned::VARCHAR <> amount_burned_raw) AS off,
      count(*) FILTER (WHERE l1_validator_details::VARCHAR LIKE '%9007199254740993%') exact_weight FROM platform_transactions`);
    expect(Number(t!.ntypes)).toBeGreaterThanOrEqual(5);
    expect(Number(t!.staked)).toBeGreaterThan(0);
    expect(t!.off).toBe('0');
    // The L1 partition is validation 0, whose weight is past 2^53: its digits survive.
    expect(Number(t!.exact_weight)).toBeGreaterThan(0);
    const [types] = await rows(run.lake, `SELECT typeof(amount) a, typeof(platform_locktime) l, typeof(addresses) ad FROM platform_outputs LIMIT 1`);
    expect(types).toEqual({ a: 'BIGNUM', l: 'DECIMAL(20,0)', ad: 'VARCHAR[]' });
  });

  it('keys are unique though partitions list the same transactions, and the UTXOs add up', async () => {
    for (const [table, key] of [['platform_transactions', 'tx_hash'], ['platform_inputs', 'tx_hash, utxo_id'], ['platform_outputs', 'tx_hash, utxo_id'], ['platform_blocks', 'block_number']]) {
      const [k] = await rows(run.lake, `SELECT count(*) n, count(DISTINCT (network, ${key})) d FROM ${table}`);
      expect(k!.n, table).toBe(k!.d);
    }
    // What a transaction consumes is what it emits plus what it burns, but where AVAX enters: a
    // reward is minted, a disabled L1 validator's balance comes back.
    const off = await rows(run.lake, `
      WITH i AS (SELECT tx_hash, sum(amount) s FROM platform_inputs GROUP BY 1), o AS (SELECT tx_hash, sum(amount) s FROM platform_outputs GROUP BY 1)
      SELECT t.tx_hash FROM platform_transactions t LEFT JOIN i USING (tx_hash) LEFT JOIN o USING (tx_hash)
      WHERE t.tx_type NOT IN ('RewardValidatorTx', 'DisableL1ValidatorTx')
        AND coalesce(i.s, 0) <> coalesce(o.s, 0) + coalesce(t.amount_burned, 0) + coalesce(t.amount_l1_validator_balance_burned, 0)`);
    expect(off).toEqual([]);
    const [c] = await rows(run.lake, `SELECT count(*) n FROM platform_transactions WHERE input_count > 0`);
    expect(Number(c!.n)).toBeGreaterThan(0);
  });

  it('sql/platform_activity_daily.sql: each transaction once, its owners and exact nAVAX, per UTC day and type', async () => {
    const got = await rows(run.lake, readFileSync('sql/platform_activity_daily.sql', 'utf8'));
    const txs = served(seed, queriesOf(run.p.streams.find((s) => s.table === 'platform_transactions')!), DEMO.now);
    const groups = new Map<string, { txs: number; owners: Set<string>; burned: bigint; staked: bigint; l1: bigint }>();
    for (const t of txs) {
      const key = line('mainnet', new Date(t.blockTimestamp * 1000).toISOString().slice(0, 10), t.txType);
      const g = groups.get(key) ?? { txs: 0, owners: new Set<string>(), burned: 0n, staked: 0n, l1: 0n };
      g.txs++;
      for (const u of [...t.consumedUtxos, ...t.emittedUtxos]) for (const a of u.addresses) g.owners.add(a);
      g.burned += BigInt(avax(t.amountBurned) ?? 0);
      g.staked += BigInt(avax(t.amountStaked) ?? 0);
      g.l1 += BigInt(avax(t.amountL1ValidatorBalanceBurned) ?? 0);
      groups.set(key, g);
    }
    const want = [...groups].map(([k, g]) => line(k, g.txs, g.owners.size, g.burned, g.staked, g.l1));
    expect(sorted(got.map((r) => line(r.network, String(r.day).slice(0, 10), r.tx_type, r.txs, r.addresses, r.navax_burned, r.navax_staked, r.navax_l1_balance)))).toEqual(sorted(want));
    expect(got.length).toBeGreaterThan(3);
  });

  it('a rerun of the still world adds nothing', async () => {
    await expectStillRerun(run.lake, run.p, TABLES);
    await expectLakeAsServed(run.lake, run.p, seed, DEMO.now);
  });

  // The world moved on: the same seed's world three hours later, served to a copy of the lake above.
  it('a moving clock: fetches from the newest committed time on and lands only what is new', async () => {
    const moved = DEMO.now + 3 * 3600;
    const sim = await startSimulator({ seed, worldNow: () => moved });
    try {
      const p = demo(sim.url);
      const lake = tmp();
      cpSync(run.lake, lake, { recursive: true });
      const store = new StateStore(lake);
      const newest = store.load('platform_transactions', `mainnet/address=${PRIMARY_DEMO.addresses[0]}`).cursor.newest!;
      const start = p.streams.find((x) => x.table === 'platform_transactions')!.startTimestamp as number;
      const own = served(seed, [{ addresses: [PRIMARY_DEMO.addresses[0]], startTimestamp: start }], DEMO.now);
      expect(newest).toBe(Math.max(...own.map((t) => t.blockTimestamp)));
      // Where each partition's next run starts: its newest committed transaction.
      const cfg = p.streams.find((x) => x.table === 'platform_transactions')!;
      const resume = queriesOf(cfg).map((q, i) => {
        const id = i < 2 ? `mainnet/address=${q.addresses![0]}` : `mainnet/l1ValidationId=${q.l1ValidationId}`;
        return { ...q, startTimestamp: store.load('platform_transactions', id).cursor.newest! };
      });
      const second = await runPipeline(p, { lake, logger: quiet });
      expect(second.status).toBe('ok');
      await expectLakeAsServed(lake, p, seed, moved);
      // Fetched again: the three hours, and the newest second of the first run, not its two hours.
      const [n] = await rows(lake, `SELECT count(*) n, count(*) FILTER (WHERE epoch(block_timestamp) > ${DEMO.now}) later FROM platform_transactions`);
      const fetched = second.streams.find((s) => s.table === 'platform_transactions')!.rows;
      expect(Number(n!.later)).toBeGreaterThan(0);
      expect(fetched).toBeLessThan(Number(n!.n));
      expect(fetched).toBe(resume.reduce((k, q) => k + primaryWorld(seed).listTransactions('mainnet', q, moved).length, 0));
      // Three hours of blocks at one every 30 s: the second run read about 360 of them, not the first hour again.
      const blocks = second.streams.find((s) => s.table === 'platform_blocks')!;
      expect(blocks.rows).toBeGreaterThan((3 * 3600) / P_BLOCK_SECONDS - 5);
      expect(blocks.rows).toBeLessThan((3 * 3600) / P_BLOCK_SECONDS + 5);
      expect(store.load('platform_blocks', 'mainnet').cursor.newest).toBeGreaterThan(DEMO.now + 3 * 3600 - 60);
    } finally {
      await sim.close();
    }
  });
});

/** The demo pipeline on `url` with only `table`'s entry, changed by `entry`. */
const onlyEntry = (table: string, entry: Record<string, unknown>) => (url: string) => {
  const p = demo(url);
  p.streams = p.streams.filter((s) => s.table === table).map((s) => ({ ...s, ...entry }));
  return p;
};

describe('a backfill', () => {
  it('more than a week from startTimestamp: fetched as time ranges at once, each transaction landed once as served', async () => {
    const seed = 11;
    const start = DEMO.now - 40 * 86_400;
    const only = onlyEntry('platform_transactions', { addresses: [PRIMARY_DEMO.addresses[0]], l1ValidationIds: undefined, startTimestamp: start, endTimestamp: DEMO.now, chunks: 4, pageSize: 5 });
    const { sim, lake, report } = await runOnSimulator(seed, only, 25);
    try {
      expectCleanRun(report, { drift: false });
      // More than a page over the 40 days: 4 ranges of 10 days (the chunks asked).
      expect(report.streams[0]!.chunks).toBe(4);
      const want = served(seed, [{ addresses: [PRIMARY_DEMO.addresses[0]], startTimestamp: start, endTimestamp: DEMO.now }], DEMO.now);
      expect(want.length).toBeGreaterThan(10);
      const got = await rows(lake, 'SELECT tx_hash, count(*) AS n FROM platform_transactions GROUP BY 1');
      expect(got.every((r) => r.n === '1')).toBe(true);
      expect(sorted(got.map((r) => String(r.tx_hash)))).toEqual(sorted(want.map((t) => t.txHash)));
      const times = want.map((t) => t.blockTimestamp);
      // Transactions of more than one range: each range's listing landed its own.
      expect(Math.max(...times) - Math.min(...times)).toBeGreaterThan(10 * 86_400);
    } finally {
      await sim.close();
    }
  });
});

describe('a backfill of platform_blocks', () => {
  it('more than a week from startTimestamp: fetched as time ranges at once, each block landed once as served', async () => {
    const seed = 11;
    const start = DEMO.now - 7 * 86_400 - 3600;
    // Batches of 1,000 rows: still several commits in each range of the 20,280 blocks (batches of
    // 25 wrote over 900 files, most of the file's CPU, for no claim here).
    const { sim, lake, report } = await runOnSimulator(seed, onlyEntry('platform_blocks', { startTimestamp: start, endTimestamp: DEMO.now, chunks: 2 }), 1000);
    try {
      expectCleanRun(report, { drift: false });
      // More than a page over the week and an hour: 2 ranges (none shorter than a week but the last): a week, and the hour left.
      expect(report.streams[0]!.chunks).toBe(2);
      const bl = primaryWorld(seed).listBlocks('mainnet', { startTimestamp: start, endTimestamp: DEMO.now }, DEMO.now);
      expect(bl.length).toBeGreaterThan((7 * 86_400 + 3600) / P_BLOCK_SECONDS - 10);
      const got = await rows(lake, `SELECT count(*) AS n, count(DISTINCT block_number) AS distinct_blocks FROM platform_blocks`);
      expect(got).toEqual([{ n: String(bl.length), distinct_blocks: String(bl.length) }]);
      const blocks = Array.from({ length: bl.length }, (_, k) => blockLine(bl.at(k)));
      expect(sorted((await rows(lake, BLOCK_SQL)).map(blockRow))).toEqual(sorted(blocks));
    } finally {
      await sim.close();
    }
  });
});

describe('the simulator answers as production', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 3 });
  });
  afterAll(async () => {
    await sim?.close();
  });
  const get = async (path: string) => {
    const r = await fetch(sim.url + path);
    return { status: r.status, body: parseExact(await r.text()) as any, text: '' };
  };

  it('every transaction type and block type passes the official client schemas', async () => {
    const TYPES = ['AddPermissionlessDelegatorTx', 'AddPermissionlessValidatorTx', 'RewardValidatorTx', 'ImportTx', 'ExportTx', 'BaseTx', 'IncreaseL1ValidatorBalanceTx',
      'RegisterL1ValidatorTx', 'SetL1ValidatorWeightTx', 'DisableL1ValidatorTx', 'ConvertSubnetToL1Tx', 'CreateSubnetTx', 'CreateChainTx', 'TransferSubnetOwnershipTx',
      'AddSubnetValidatorTx', 'RemoveSubnetValidatorTx'];
    const page = async (path: string) => {
      const body = JSON.parse(await (await fetch(sim.url + path)).text());
      const parsed = ListPChainTransactionsResponse$inboundSchema.safeParse(body);
      if (!parsed.success) console.error(path, JSON.stringify(parsed.error.issues.slice(0, 5)));
      expect(parsed.success).toBe(true);
      return body.transactions as Array<{ txType: string }>;
    };
    // A page of each type of the two owners' transactions (the L1 ones: of validation 0 too).
    for (const t of TYPES) {
      const [got] = await page(`${TX_PATH}?addresses=${PRIMARY_DEMO.addresses.join(',')}&txTypes=${t}&pageSize=100`);
      expect(got?.txType, t).toBe(t);
    }
    for (const v of PRIMARY_DEMO.l1ValidationIds) expect((await page(`${TX_PATH}?l1ValidationId=${v}&pageSize=100`)).length).toBeGreaterThan(0);
    expect((await page(`${TX_PATH}?pageSize=100`)).length).toBeGreaterThan(0);
    const blockTypes = new Set<string>();
    let path: string | undefined = `${BLOCKS_PATH}?pageSize=100`;
    for (let n = 0; path && n < 3; n++) {
      const body = JSON.parse(await (await fetch(sim.url + path)).text());
      const parsed = ListPrimaryNetworkBlocksResponse$inboundSchema.safeParse(body);
      if (!parsed.success) console.error(JSON.stringify(parsed.error.issues.slice(0, 5)));
      expect(parsed.success).toBe(true);
      for (const b of body.blocks) blockTypes.add(b.blockType);
      path = `${BLOCKS_PATH}?pageSize=100&pageToken=${body.nextPageToken}`;
    }
    expect([...blockTypes].sort()).toEqual(['BanffCommitBlock', 'BanffProposalBlock', 'BanffStandardBlock']);
  });

  it('honours time filters and sortOrder, and ends pages at the UTXO threshold', async () => {
    const a = PRIMARY_DEMO.addresses[0];
    const start = DEMO.now - 86_400;
    const end = DEMO.now - 43_200;
    const desc = await get(`${TX_PATH}?addresses=${a}&startTimestamp=${start}&endTimestamp=${end}&pageSize=5`);
    const asc = await get(`${TX_PATH}?addresses=${a}&startTimestamp=${start}&endTimestamp=${end}&pageSize=5&sortOrder=asc`);
    const times = (b: any) => b.transactions.map((t: any) => Number(t.blockTimestamp));
    expect(times(desc.body).every((t: number) => t >= start && t <= end)).toBe(true);
    expect(times(desc.body)).toEqual([...times(desc.body)].sort((x, y) => y - x));
    expect(times(asc.body)).toEqual([...times(asc.body)].sort((x, y) => x - y));
    expect(times(asc.body)[0]).toBeLessThan(times(desc.body)[0]);
    const world = primaryWorld(3).listTransactions('mainnet', { addresses: [a], startTimestamp: start, endTimestamp: end, sortOrder: 'asc' });
    expect(asc.body.transactions.map((t: any) => t.txHash)).toEqual(Array.from({ length: 5 }, (_, k) => world.at(k).txHash));
    const big = await get(`${TX_PATH}?addresses=${a}&pageSize=100`);
    const utxos = big.body.transactions.reduce((n: number, t: any) => n + t.consumedUtxos.length + t.emittedUtxos.length, 0);
    expect(big.body.transactions.length).toBeLessThan(100);
    expect(utxos).toBeGreaterThanOrEqual(UTXO_PAGE_LIMIT);
    expect(big.body.nextPageToken).toBeTypeOf('string');
    expect(big.body.chainInfo).toEqual({ chainName: 'p-chain', network: 'mainnet' });
    const blocks = await get(`${BLOCKS_PATH}?startTimestamp=${start}&endTimestamp=${start + 600}&pageSize=100`);
    const bt = blocks.body.blocks.map((b: any) => b.blockTimestamp);
    expect(bt.length).toBeGreaterThan(15);
    expect(bt.every((t: number) => t >= start && t <= start + 600)).toBe(true);
    expect(bt).toEqual([...bt].sort((x: number, y: number) => y - x));
    expect((await get(`/v1/networks/mainnet/blockchains/${P_CHAIN_ID}/blocks?pageSize=1`)).body.blocks).toHaveLength(1);
  });

  it('answers 400 naming the parameter', async () => {
    const a = PRIMARY_DEMO.addresses[0];
    const cases: Array<[string, RegExp]> = [
      [`${TX_PATH}?startTimestamp=5`, /^startTimestamp is supported only with addresses or l1ValidationId/],
      [`${TX_PATH}?txTypes=BaseTx`, /^txTypes is supported only/],
      [`${TX_PATH}?addresses=0x319646172ef34adDbBa180d4A2c86B3b4A06907d`, /^addresses: "0x3196/],
      [`${TX_PATH}?addresses=P-fuji1x`, /^addresses: "P-fuji1x"/],
      [`${TX_PATH}?addresses=${a}&txTypes=BaseTx,Nope`, /^txTypes: "Nope" must be one of/],
      [`${TX_PATH}?l1ValidationId=abc`, /^l1ValidationId must be an id/],
      [`${TX_PATH}?addresses=${a}&startTimestamp=10&endTimestamp=5`, /^startTimestamp must not be greater than endTimestamp/],
      [`${TX_PATH}?addresses=${a}&startTimestamp=-1`, /^startTimestamp must not be less than 0/],
      [`${TX_PATH}?addresses=${a}&sortOrder=up`, /^sortOrder must be one of: asc, desc/],
      [`${TX_PATH}?addresses=${a}&pageSize=101`, /^pageSize must not be greater than 100/],
      [`${BLOCKS_PATH}?pageSize=0`, /^pageSize must not be less than 1/],
      [`/v1/networks/moon/blockchains/p-chain/blocks`, /^network must be one of/],
      [`/v1/networks/mainnet/blockchains/q-chain/blocks`, /^blockchainId must be one of/],
    ];
    for (const [path, message] of cases) {
      const r = await get(path);
      expect(r.status, path).toBe(400);
      expect(r.body.message, path).toMatch(message);
    }
    const first = await get(`${TX_PATH}?addresses=${a}&pageSize=2`);
    const other = await get(`${TX_PATH}?addresses=${PRIMARY_DEMO.addresses[1]}&pageSize=2&pageToken=${first.body.nextPageToken}`);
    expect(other.status).toBe(400);
    expect(other.body.message).toMatch(/pageToken/);
  });
});

describe('pipeline entries', () => {
  it('name the option and the stream of each mistake', () => {
    let msg = '';
    try {
      checkPipeline({
        name: 'bad',
        sources: { data: { url: 'http://127.0.0.1:1' } },
        streams: [
          { table: 'platform_transactions', network: 'mainnet' },
          { table: 'platform_inputs', network: 'mainnet', addresses: [PRIMARY_DEMO.addresses[0]], txTypes: ['BaseTx', 'Swap'], startTimestamp: 1_700_000_010, endTimestamp: 1_700_000_005 },
          { table: 'platform_outputs', network: 'fuji', addresses: [PRIMARY_DEMO.addresses[0]] },
          { table: 'platform_blocks', network: 'mainnet' },
          { table: 'platform_transactions', network: 'mainnet', l1ValidationIds: ['nope'] },
        ],
      }, 'bad.yaml');
    } catch (err) {
      msg = (err as Error).message;
    }
    expect(msg).toContain('streams[0].addresses: give addresses or l1ValidationIds');
    expect(msg).toContain('streams[1].txTypes[1]: "Swap" is not a platform-chain transaction type');
    expect(msg).toContain('streams[1].endTimestamp: startTimestamp 2023-11-14T22:13:30Z must be before endTimestamp 2023-11-14T22:13:25Z (the end is excluded)');
    expect(msg).toMatch(/streams\[2\]\.addresses\[0\]: .* is not a fuji P-\/X-chain address/);
    expect(msg).toMatch(/streams\[3\]\.startTimestamp: .*required/);
    expect(msg).toMatch(/streams\[4\]\.l1ValidationIds\[0\]: "nope" is not an id/);
  });
});
