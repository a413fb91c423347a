// The active staking transactions of addresses (staking_transactions) and the P-Chain blocks a node
// proposed (node_blocks). Pipelines run in-process against the simulator: each table row for row
// with what the simulator's world served, in agreement with platform_transactions and
// platform_blocks of the same world, amounts exact; a rerun adds nothing, a moving clock adds only
// what is new (and keeps the stakes that unlocked since); every page the simulator serves passes
// the official client's response schemas; a 400 fails the partition; a bad entry is named.
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { P_CHAIN_ID, PRIMARY_DEMO, STAKING_TX_TYPES, primaryWorld, type PChainTransaction, type PrimaryNetworkBlock, type PrimaryTxQuery } from '../../src/simulator/primary.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { nodeIdOf } from '../../src/simulator/staking.js';
import { DEMO } from '../../src/simulator/world.js';
import { StateStore } from '../../src/state/store.js';
import { STAKING_TX_TYPES as DECLARED_STAKING_TYPES } from '../../src/streams/staking_transactions.js';
import { officialProblems } from '../official.js';
import { lakeRows as rows, line, quiet, recordingProxy, sorted, simulatorRun } from '../helpers.js';

const DAY = 86_400;
const tmp = () => mkdtempSync(join(tmpdir(), 'cl-staking-'));
const ADDRESSES = PRIMARY_DEMO.addresses;
const NODES = DEMO.nodeIds;
/** platform_transactions' window, beside which every staking transaction since is still active (stakes last 14 days or more). */
const TX_START = DEMO.now - 3 * DAY;
const BLOCKS_START = DEMO.now - DAY;
const STAKING = '/v1/networks/mainnet/blockchains/p-chain/transactions:listStaking';
const nodePath = (n: string) => `/v1/networks/mainnet/blockchains/p-chain/nodes/${n}/blocks`;

function pipeline(url: string): Pipeline {
  return checkPipeline({
    name: 'staking',
    sources: { data: { url } },
    streams: [
      { table: 'staking_transactions', network: 'mainnet', addresses: ADDRESSES },
      { table: 'node_blocks', network: 'mainnet', nodeIds: NODES, startTimestamp: BLOCKS_START },
      { table: 'platform_transactions', network: 'mainnet', addresses: ADDRESSES, txTypes: ['AddPermissionlessValidatorTx', 'AddPermissionlessDelegatorTx'], startTimestamp: TX_START },
      { table: 'platform_blocks', network: 'mainnet', startTimestamp: BLOCKS_START },
    ],
  }, 'staking.yaml');
}

const avax = (list: Array<{ amount: string }>) => (list.length ? list.reduce((n, a) => n + BigInt(a.amount), 0n).toString() : undefined);
const all = <T>(l: { length: number; at(k: number): T }) => Array.from({ length: l.length }, (_, k) => l.at(k));

const stakeLine = (address: string, t: PChainTransaction) =>
  line(address, t.txHash, t.txType, t.blockNumber, t.blockTimestamp, t.blockHash, avax(t.value), avax(t.amountBurned), avax(t.amountStaked), t.consumedUtxos.length, t.emittedUtxos.length,
    t.nodeId, t.subnetId, t.startTimestamp, t.endTimestamp, t.delegationFeePercent, t.estimatedReward, t.rewardAddresses, t.blsCredentials?.publicKey,
    [...new Set([...t.consumedUtxos, ...t.emittedUtxos].flatMap((u) => u.addresses))].sort());
const STAKE_SQL = `SELECT address, tx_hash, tx_type, block_number, epoch(block_timestamp)::BIGINT ts, block_hash, value_raw, amount_burned_raw, amount_staked_raw, input_count, output_count,
  node_id, subnet_id, epoch(start_timestamp)::BIGINT st, epoch(end_timestamp)::BIGINT et, delegation_fee_percent, estimated_reward_raw, reward_addresses, bls_public_key, addresses
  FROM staking_transactions`;
const stakeRow = (r: Record<string, any>) =>
  line(r.address, r.tx_hash, r.tx_type, r.block_number, r.ts, r.block_hash, r.value_raw, r.amount_burned_raw, r.amount_staked_raw, r.input_count, r.output_count, r.node_id,
    r.subnet_id, r.st, r.et, r.delegation_fee_percent, r.estimated_reward_raw, r.reward_addresses, r.bls_public_key, r.addresses);

const blockLine = (node: string, b: PrimaryNetworkBlock) =>
  line(node, b.blockNumber, b.blockHash, b.parentHash, b.blockTimestamp, b.blockType, b.txCount, b.transactions, b.blockSizeBytes, b.l1ValidatorsAccruedFees, b.activeL1Validators,
    b.currentSupply, b.proposerDetails?.proposerId, b.proposerDetails?.proposerNodeId, b.proposerDetails?.proposerPChainHeight, b.proposerDetails?.proposerTimestamp);
const BLOCK_SQL = `SELECT node_id, block_number, block_hash, parent_hash, epoch(block_timestamp)::BIGINT ts, block_type, tx_count, tx_hashes, block_size_bytes, l1_validators_accrued_fees_raw,
  active_l1_validators, current_supply_raw, proposer_id, proposer_node_id, proposer_p_chain_height, epoch(proposer_timestamp)::BIGINT pts FROM node_blocks`;
const blockRow = (r: Record<string, any>) =>
  line(r.node_id, r.block_number, r.block_hash, r.parent_hash, r.ts, r.block_type, r.tx_count, r.tx_hashes, r.block_size_bytes, r.l1_validators_accrued_fees_raw,
    r.active_l1_validators, r.current_supply_raw, r.proposer_id, r.proposer_node_id, r.proposer_p_chain_height, r.pts);

/**
 * What the world lists, made once per file: each transaction and block is derived anew (hashes
 * and all) at every call, and the tests ask the same listings several times.
 */
const listed = new Map<string, unknown[]>();
const once = <T>(key: unknown[], make: () => T[]): T[] => {
  const k = JSON.stringify(key);
  if (!listed.has(k)) listed.set(k, make());
  return listed.get(k) as T[];
};
/** What the world lists of an address's active staking transactions at t (from a time on). */
const stakes = (seed: number, address: string, t: number, q: PrimaryTxQuery = {}) =>
  once(['stakes', seed, address, t, q], () => all(primaryWorld(seed).listStaking('mainnet', { addresses: [address], ...q }, t)));
const nodeBlocks = (seed: number, node: string, t: number, start = BLOCKS_START) =>
  once(['blocks', seed, node, t, start], () => all(primaryWorld(seed).listBlocksByNode('mainnet', node, { startTimestamp: start }, t)));

/** One world for the file: the listings the tests derive of it are made once (see once). */
const seed = 21;

describe('staking_transactions and node_blocks on the simulator', () => {
  const run = simulatorRun(seed, pipeline, 200);

  it('lands each address\'s active staking transactions and each node\'s blocks as served, amounts exact', async () => {
    const want = ADDRESSES.flatMap((a) => stakes(seed, a, DEMO.now).map((t) => stakeLine(a, t)));
    expect(want.length).toBeGreaterThan(500);
    expect(sorted((await rows(run.lake, STAKE_SQL)).map(stakeRow))).toEqual(sorted(want));
    const blocks = NODES.flatMap((n) => nodeBlocks(seed, n, DEMO.now).map((b) => blockLine(n, b)));
    expect(blocks.length).toBeGreaterThan(600);
    expect(sorted((await rows(run.lake, BLOCK_SQL)).map(blockRow))).toEqual(sorted(blocks));
    const [s] = await rows(run.lake, `SELECT count(*) n, count(DISTINCT tx_type) ntypes, count(*) FILTER (WHERE amount_staked::VARCHAR <> amount_staked_raw OR estimated_reward::VARCHAR <> estimated_reward_raw) AS off,
      count(*) FILTER (WHERE NOT list_contains(addresses, replace(address, 'P-', '')) AND list_contains(reward_addresses, replace(address, 'P-', ''))) by_reward,
      count(*) FILTER (WHERE end_timestamp <= to_timestamp(${DEMO.now})) ended, min(typeof(amount_staked)) ty FROM staking_transactions`);
    expect(s).toMatchObject({ ntypes: '2', off: '0', ended: '0', ty: 'BIGNUM' });
    // An address lists the stakes it is rewarded by as well as those it owns: a row per address.
    expect(Number(s!.by_reward)).toBeGreaterThan(0);
    const [b] = await rows(run.lake, `SELECT count(*) FILTER (WHERE proposer_node_id <> node_id) other, count(*) FILTER (WHERE l1_validators_accrued_fees::VARCHAR <> l1_validators_accrued_fees_raw) AS off FROM node_blocks`);
    expect(b).toEqual({ other: '0', off: '0' });
  });

  it('agrees with platform_transactions and platform_blocks of the same world', async () => {
    // Since TX_START every staking transaction is still active: both tables hold the same ones, whole.
    const staking = `SELECT * EXCLUDE (address) FROM staking_transactions WHERE block_timestamp >= to_timestamp(${TX_START})`;
    expect(await rows(run.lake, `SELECT count(*) n FROM (${staking} EXCEPT SELECT * FROM platform_transactions)`)).toEqual([{ n: '0' }]);
    expect(await rows(run.lake, `SELECT count(*) n FROM (SELECT * FROM platform_transactions EXCEPT ${staking})`)).toEqual([{ n: '0' }]);
    const [n] = await rows(run.lake, `SELECT count(*) n FROM platform_transactions`);
    expect(Number(n!.n)).toBeGreaterThan(50);
    // The chain's blocks the two nodes proposed are exactly the nodes' listings.
    const proposed = `SELECT * FROM platform_blocks WHERE proposer_node_id IN (${NODES.map((x) => `'${x}'`).join(', ')})`;
    expect(await rows(run.lake, `SELECT count(*) n FROM (SELECT * EXCLUDE (node_id) FROM node_blocks EXCEPT ${proposed})`)).toEqual([{ n: '0' }]);
    expect(await rows(run.lake, `SELECT count(*) n FROM (${proposed} EXCEPT SELECT * EXCLUDE (node_id) FROM node_blocks)`)).toEqual([{ n: '0' }]);
  });

  it('keys are unique, though one transaction is listed for two addresses', async () => {
    const [k] = await rows(run.lake, `SELECT count(*) n, count(DISTINCT (network, address, tx_hash)) d, count(DISTINCT tx_hash) txs FROM staking_transactions`);
    expect(k!.n).toBe(k!.d);
    const [b] = await rows(run.lake, `SELECT count(*) n, count(DISTINCT (network, node_id, block_number)) d FROM node_blocks`);
    expect(b!.n).toBe(b!.d);
  });

  it('a rerun of the still world adds nothing', async () => {
    const count = () => rows(run.lake, `SELECT (SELECT count(*) FROM staking_transactions) s, (SELECT count(*) FROM node_blocks) b`);
    const before = await count();
    const second = await runPipeline(run.p, { lake: run.lake, logger: quiet });
    expect(second.status).toBe('ok');
    expect(await count()).toEqual(before);
    expect(sorted((await rows(run.lake, STAKE_SQL)).map(stakeRow))).toEqual(sorted(ADDRESSES.flatMap((a) => stakes(seed, a, DEMO.now).map((t) => stakeLine(a, t)))));
  });

  // The world moved on: the same seed's world days later, served to a copy of the lake above.
  it('a moving clock: fetches from the newest committed time on, lands only what is new and keeps stakes that unlocked since', async () => {
    // Five days on: the first stakes of the lake unlock after three.
    const moved = DEMO.now + 5 * DAY;
    const sim = await startSimulator({ seed, worldNow: () => moved });
    try {
      const p = pipeline(sim.url);
      p.streams = p.streams.filter((s) => s.table === 'staking_transactions' || s.table === 'node_blocks');
      const lake = tmp();
      cpSync(run.lake, lake, { recursive: true });
      const store = new StateStore(lake);
      const first = new Map(ADDRESSES.map((a) => [a, stakes(seed, a, DEMO.now)]));
      const newest = (a: string) => store.load('staking_transactions', `mainnet/address=${a}`).cursor.newest!;
      for (const a of ADDRESSES) expect(newest(a)).toBe(Math.max(...first.get(a)!.map((t) => t.blockTimestamp)));
      const resume = new Map(ADDRESSES.map((a) => [a, newest(a)]));
      const second = await runPipeline(p, { lake, logger: quiet });
      expect(second.status).toBe('ok');
      // Fetched again: what is active now from each address's newest committed transaction on.
      const later = new Map(ADDRESSES.map((a) => [a, stakes(seed, a, moved, { startTimestamp: resume.get(a)! })]));
      expect(second.streams.find((s) => s.table === 'staking_transactions')!.rows).toBe([...later.values()].reduce((n, l) => n + l.length, 0));
      const want = new Map<string, string>();
      for (const a of ADDRESSES) for (const t of [...first.get(a)!, ...later.get(a)!]) want.set(`${a}|${t.txHash}`, stakeLine(a, t));
      expect(sorted((await rows(lake, STAKE_SQL)).map(stakeRow))).toEqual(sorted([...want.values()]));
      // Stakes that unlocked between the runs are no longer listed, and their rows stay.
      const [e] = await rows(lake, `SELECT count(*) n FROM staking_transactions WHERE end_timestamp <= to_timestamp(${moved})`);
      expect(Number(e!.n)).toBeGreaterThan(0);
      expect(Number((await rows(lake, `SELECT count(*) n FROM staking_transactions WHERE epoch(block_timestamp) > ${DEMO.now}`))[0]!.n)).toBeGreaterThan(0);
      // Node blocks: the whole window up to now, the second run reading only the five days after the first.
      const blocks = NODES.flatMap((n) => nodeBlocks(seed, n, moved).map((b) => blockLine(n, b)));
      expect(sorted((await rows(lake, BLOCK_SQL)).map(blockRow))).toEqual(sorted(blocks));
      const fetched = second.streams.find((s) => s.table === 'node_blocks')!.rows;
      const cursors = NODES.map((n) => nodeBlocks(seed, n, DEMO.now)[0]!.blockTimestamp);
      expect(fetched).toBe(NODES.reduce((k, n, i) => k + nodeBlocks(seed, n, moved, cursors[i]).length, 0));
      expect(fetched).toBeLessThan(blocks.length);
    } finally {
      await sim.close();
    }
  });
});

describe('the simulator answers as production', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed });
  });
  afterAll(async () => {
    await sim?.close();
  });
  const get = async (path: string) => {
    const r = await fetch(sim.url + path);
    return { status: r.status, body: JSON.parse(await r.text()) as any };
  };
  /** Every page of a listing, each judged by the official client's schema of its route. */
  const pages = async (route: string, path: string, items: string) => {
    const out: any[] = [];
    let token: string | undefined;
    let n = 0;
    do {
      const r = await get(`${path}${path.includes('?') ? '&' : '?'}pageSize=100${token ? `&pageToken=${token}` : ''}`);
      expect(r.status, path).toBe(200);
      const problems = officialProblems(route, r.body);
      if (problems) console.error(path, problems);
      expect(problems, path).toBe('');
      expect(r.body.chainInfo).toEqual({ chainName: 'p-chain', network: 'mainnet' });
      out.push(...r.body[items]);
      token = r.body.nextPageToken;
      n++;
    } while (token);
    return { items: out, pages: n };
  };

  it('pages every staking listing and node listing in shapes the official client accepts, as the world holds them', async () => {
    for (const a of ADDRESSES) {
      const got = await pages('primaryStaking', `${STAKING}?addresses=${a}`, 'transactions');
      expect(got.pages).toBeGreaterThan(1);
      expect(got.items.map((t) => t.txHash)).toEqual(stakes(seed, a, DEMO.now).map((t) => t.txHash));
      expect(got.items.every((t) => STAKING_TX_TYPES.includes(t.txType) && t.endTimestamp > DEMO.now)).toBe(true);
    }
    for (const n of NODES) {
      const got = await pages('primaryNodeBlocks', `${nodePath(n)}?startTimestamp=${BLOCKS_START}`, 'blocks');
      expect(got.pages).toBeGreaterThan(1);
      expect(got.items.map((b) => b.blockHash)).toEqual(nodeBlocks(seed, n, DEMO.now).map((b) => b.blockHash));
      expect(got.items.every((b) => b.proposerDetails.proposerNodeId === n)).toBe(true);
    }
    // The world's blocks are each proposed by one of its six nodes, but commits, which no one proposes.
    const w = primaryWorld(seed);
    const span = { startTimestamp: BLOCKS_START };
    const chain = all(w.listBlocks('mainnet', span)).filter((b) => b.blockType !== 'BanffCommitBlock');
    const byNode = Array.from({ length: 6 }, (_, v) => all(w.listBlocksByNode('mainnet', nodeIdOf('mainnet', v), span))).flat();
    expect(sorted(byNode.map((b) => b.blockHash))).toEqual(sorted(chain.map((b) => b.blockHash)));
    // The chain's declared staking types are the simulator's.
    expect([...DECLARED_STAKING_TYPES]).toEqual([...STAKING_TX_TYPES]);
  });

  it('honours txTypes, time filters and sortOrder; a node that proposed nothing lists nothing', async () => {
    const a = ADDRESSES[0]!;
    const start = DEMO.now - 5 * DAY;
    const end = DEMO.now - 2 * DAY;
    const desc = await get(`${STAKING}?addresses=${a}&startTimestamp=${start}&endTimestamp=${end}&pageSize=5`);
    const asc = await get(`${STAKING}?addresses=${a}&startTimestamp=${start}&endTimestamp=${end}&pageSize=5&sortOrder=asc`);
    const times = (b: any) => b.transactions.map((t: any) => t.blockTimestamp as number);
    expect(times(desc.body).every((t: number) => t >= start && t <= end)).toBe(true);
    expect(times(desc.body)).toEqual([...times(desc.body)].sort((x, y) => y - x));
    expect(times(asc.body)).toEqual([...times(asc.body)].sort((x, y) => x - y));
    expect(times(asc.body)[0]).toBeLessThan(times(desc.body)[0]);
    expect(desc.body.transactions).toHaveLength(5);
    const validators = await pages('primaryStaking', `${STAKING}?addresses=${a}&txTypes=AddPermissionlessValidatorTx`, 'transactions');
    expect(validators.items.length).toBeGreaterThan(0);
    expect(new Set(validators.items.map((t) => t.txType))).toEqual(new Set(['AddPermissionlessValidatorTx']));
    // A type that never stakes lists nothing, as does a node that proposed no block.
    expect((await get(`${STAKING}?addresses=${a}&txTypes=BaseTx`)).body.transactions).toEqual([]);
    const stranger = nodeIdOf('mainnet', 40);
    expect((await get(`${nodePath(stranger)}?startTimestamp=${BLOCKS_START}`)).body).toEqual({ blocks: [], chainInfo: { chainName: 'p-chain', network: 'mainnet' } });
    const blocks = await get(`/v1/networks/mainnet/blockchains/${P_CHAIN_ID}/nodes/${NODES[0]}/blocks?startTimestamp=${start}&endTimestamp=${start + 3600}`);
    const bt = blocks.body.blocks.map((b: any) => b.blockTimestamp as number);
    expect(bt.length).toBeGreaterThan(3);
    expect(bt.every((t: number) => t >= start && t <= start + 3600)).toBe(true);
    expect(bt).toEqual([...bt].sort((x, y) => y - x));
  });

  it('lists the whole network\'s active staking transactions without addresses, as the OpenAPI has it optional', async () => {
    const r = await get(`${STAKING}?pageSize=100`);
    expect(r.status).toBe(200);
    expect(r.body.transactions).toHaveLength(100);
    expect(typeof r.body.nextPageToken).toBe('string');
    const types = new Set(['AddValidatorTx', 'AddDelegatorTx', 'AddPermissionlessValidatorTx', 'AddPermissionlessDelegatorTx']);
    for (const t of r.body.transactions as Array<{ txType: string; endTimestamp: number }>) {
      expect(types.has(t.txType), t.txType).toBe(true);
      expect(t.endTimestamp).toBeGreaterThan(DEMO.now);
    }
    // Every address's own listing of the last day is in the network's, and the network's has more.
    // (The network's is read newest first down to the day: each of its transactions is derived
    // anew, hashes and all, and the whole of it cost more than the rest of the file's checks.)
    const network = primaryWorld(seed).listStaking('mainnet', {}, DEMO.now);
    const since = DEMO.now - DAY;
    const recent = new Set<string>();
    for (let k = 0; k < network.length; k++) {
      const t = network.at(k);
      if (t.blockTimestamp < since) break;
      recent.add(t.txHash);
    }
    const own = ADDRESSES.flatMap((a) => stakes(seed, a, DEMO.now));
    const ownRecent = own.filter((t) => t.blockTimestamp >= since).map((t) => t.txHash);
    expect(ownRecent.length).toBeGreaterThan(0);
    expect(ownRecent.filter((h) => !recent.has(h))).toEqual([]);
    expect(recent.size).toBeGreaterThan(new Set(ownRecent).size);
    expect(network.length).toBeGreaterThan(new Set(own.map((t) => t.txHash)).size);
  });

  it('answers 400 naming the parameter', async () => {
    const a = ADDRESSES[0]!;
    const n = NODES[0]!;
    const cases: Array<[string, RegExp]> = [
      [`${STAKING}?addresses=P-fuji1x`, /^addresses: "P-fuji1x"/],
      [`${STAKING}?addresses=${a}&txTypes=AddValidatorTx,Nope`, /^txTypes: "Nope" must be one of/],
      [`${STAKING}?addresses=${a}&startTimestamp=10&endTimestamp=5`, /^startTimestamp must not be greater than endTimestamp/],
      [`${STAKING}?addresses=${a}&sortOrder=up`, /^sortOrder must be one of: asc, desc/],
      [`${STAKING}?addresses=${a}&pageSize=101`, /^pageSize must not be greater than 100/],
      [`/v1/networks/mainnet/blockchains/x-chain/transactions:listStaking?addresses=${a}`, /^blockchainId must be one of: 11111111111111111111111111111111LpoYY, p-chain$/],
      [`/v1/networks/moon/blockchains/p-chain/transactions:listStaking?addresses=${a}`, /^network must be one of/],
      [nodePath('NodeID-abc'), /^nodeId: "NodeID-abc"/],
      [nodePath('abc'), /^nodeId: "abc" does not start with NodeID-/],
      [`${nodePath(n)}?pageSize=0`, /^pageSize must not be less than 1/],
      [`${nodePath(n)}?startTimestamp=10&endTimestamp=5`, /^startTimestamp must not be greater than endTimestamp/],
      [`/v1/networks/mainnet/blockchains/q-chain/nodes/${n}/blocks`, /^blockchainId must be one of/],
    ];
    for (const [path, message] of cases) {
      const r = await get(path);
      expect(r.status, path).toBe(400);
      expect(r.body.message, path).toMatch(message);
    }
    const first = await get(`${STAKING}?addresses=${a}&pageSize=2`);
    const other = await get(`${STAKING}?addresses=${ADDRESSES[1]}&pageSize=2&pageToken=${first.body.nextPageToken}`);
    expect(other.status).toBe(400);
    expect(other.body.message).toMatch(/pageToken/);
    const firstBlocks = await get(`${nodePath(n)}?pageSize=2`);
    expect((await get(`${nodePath(NODES[1]!)}?pageSize=2&pageToken=${firstBlocks.body.nextPageToken}`)).status).toBe(400);
  });
});

describe('a refused request and pipeline entries', () => {
  it('a 400 fails its partition with the service\'s message, and the other table still lands', async () => {
    const sim = await startSimulator({ seed });
    const proxy = await recordingProxy(sim.url, { refuse: (r) => r.url.includes('transactions:listStaking') && r.url.includes(ADDRESSES[1]!) });
    try {
      const p = pipeline(proxy.url);
      // The other table's last hour is enough to show it lands.
      p.streams = p.streams.filter((s) => s.table === 'staking_transactions' || s.table === 'node_blocks').map((s) => (s.table === 'node_blocks' ? { ...s, startTimestamp: DEMO.now - 3600 } : s));
      const lake = tmp();
      const r = await runPipeline(p, { lake, logger: quiet });
      expect(r.status).toBe('failed');
      const s = r.streams.find((x) => x.table === 'staking_transactions')!;
      expect(s.partitionsDone).toBe(1);
      expect(s.errors.join()).toContain('refused by the test proxy');
      expect(r.streams.find((x) => x.table === 'node_blocks')!.errors).toEqual([]);
      expect(await rows(lake, `SELECT DISTINCT address FROM staking_transactions`)).toEqual([{ address: ADDRESSES[0] }]);
      // Sent as declared: one address a request, the page size chainlake sends.
      const sent = proxy.requests.filter((x) => x.url.includes('listStaking')).map((x) => new URL(x.url, 'http://x').searchParams);
      expect(sent.every((q) => !q.get('addresses')!.includes(',') && q.get('pageSize') === '100')).toBe(true);
    } finally {
      await proxy.close();
      await sim.close();
    }
  });

  it('name the option and the stream of each mistake', () => {
    let msg = '';
    try {
      checkPipeline({
        name: 'bad',
        sources: { data: { url: 'http://127.0.0.1:1' } },
        streams: [
          { table: 'staking_transactions', network: 'mainnet' },
          { table: 'staking_transactions', network: 'mainnet', addresses: [ADDRESSES[0]], txTypes: ['AddValidatorTx', 'BaseTx'], startTimestamp: 1_700_000_010, endTimestamp: 1_700_000_005 },
          { table: 'staking_transactions', network: 'fuji', addresses: [ADDRESSES[0]] },
          { table: 'node_blocks', network: 'mainnet', nodeIds: NODES },
          { table: 'node_blocks', network: 'mainnet', startTimestamp: 1_700_000_005 },
          { table: 'node_blocks', network: 'mainnet', nodeIds: ['NodeID-abc'], startTimestamp: 1_700_000_010 },
          { table: 'node_blocks', network: 'mainnet', nodeIds: NODES, startTimestamp: 1_700_000_010, endTimestamp: 1_700_000_010 },
        ],
      }, 'bad.yaml');
    } catch (err) {
      msg = (err as Error).message;
    }
    expect(msg).toContain('bad.yaml: streams[0].addresses: is required for staking_transactions');
    expect(msg).toContain('streams[1].txTypes[1]: "BaseTx" is not a staking transaction type (AddValidatorTx, AddDelegatorTx, AddPermissionlessValidatorTx, AddPermissionlessDelegatorTx)');
    expect(msg).toContain('streams[1].endTimestamp: startTimestamp 2023-11-14T22:13:30Z must be before endTimestamp 2023-11-14T22:13:25Z (the end is excluded)');
    expect(msg).toMatch(/streams\[2\]\.addresses\[0\]: .* is not a fuji P-\/X-chain address/);
    expect(msg).toContain('streams[3].startTimestamp: is required for node_blocks');
    expect(msg).toContain('streams[4].nodeIds: is required for node_blocks');
    expect(msg).toMatch(/streams\[5\]\.nodeIds\[0\]: "NodeID-abc" is not a NodeID/);
    expect(msg).toContain('streams[6].endTimestamp: startTimestamp 2023-11-14T22:13:30Z must be before endTimestamp 2023-11-14T22:13:30Z (the end is excluded)');
  });
});
