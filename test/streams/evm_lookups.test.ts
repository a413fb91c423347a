// Issue 40's EVM and metrics lookups (metrics_chains, chain_rolling_metrics, icm_summary,
// l1_validator_addresses, btcb_bridgers, address_evm_chains, nft_tokens) against one simulated
// world, beside the tables they must agree with (chains, chain_metrics, icm_messages,
// l1_validators, erc_transfers, address_transactions): every row as the world serves it, every
// page accepted by the official client, a rerun adding only a snapshot where the table keeps them.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import type { RunReport } from '../../src/pipeline/report.js';
import { btcbBridgers, collectionTokens, icmSummary, lastActivity, rollingWindow, validatorAddresses, ROLLING_METRICS } from '../../src/simulator/lookups.js';
import { icmOf } from '../../src/simulator/icm.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { LAKESIDE_SUBNET_ID } from '../../src/simulator/subnets.js';
import { validatorWorld } from '../../src/simulator/validators.js';
import { DEMO } from '../../src/simulator/world.js';
import { ROLLING_METRICS as DECLARED_ROLLING_METRICS } from '../../src/streams/chain_rolling_metrics.js';
import { expectCleanRun, lakeRows as rows, line, pipelineProblem, quiet, runAtTimes, sorted } from '../helpers.js';
import { listingPages, officialProblems, publishedProblems } from '../official.js';
import { rpcUsage } from '../../src/simulator/rpc_usage.js';

const AT = DEMO.now + 5 * 3600;
/** Wall clocks of the two runs: a snapshot each. */
const WALL = [1_900_000_000, 1_900_000_600];
const SNAPSHOTS = ['chain_rolling_metrics', 'icm_summary'];
const MERGED = ['metrics_chains', 'l1_validator_addresses', 'btcb_bridgers', 'address_evm_chains', 'nft_tokens', 'address_last_activity'];
const THRESHOLD = '1000000000';
const STRANGER = '0x00000000000000000000000000000000000000aa';

describe('issue 40 lookups on one world', () => {
  const clock = { t: AT };
  let sim: Simulator;
  let lake: string;
  let p: Pipeline;
  let lakeside: string;
  let cchain: string;
  /** A range ending at the newest Lakeside validation's creation: that one is not in it. */
  let range: { startTimestamp: number; endTimestamp: number };
  const reports: RunReport[] = [];
  const counts: Array<Record<string, string>> = [];

  beforeAll(async () => {
    sim = await startSimulator({ seed: 11, worldNow: () => clock.t });
    lakeside = sim.world.chain('432204')!.blockchainId;
    cchain = sim.world.chain('43114')!.blockchainId;
    const created = validatorWorld(sim.world).l1Fees('mainnet').filter((v) => v.subnetId === LAKESIDE_SUBNET_ID).map((v) => v.creation);
    range = { startTimestamp: Math.min(...created), endTimestamp: Math.max(...created) };
    p = loadPipeline('pipelines/demo.yaml');
    for (const s of Object.values(p.sources)) s.url = sim.url;
    p.streams = [
      { table: 'chains' },
      { table: 'metrics_chains' },
      { table: 'chain_metrics', chainIds: ['43114'], metrics: ['txCount', 'maxTps'], timeInterval: 'day', startTimestamp: DEMO.now - 400 * 86_400 },
      { table: 'chain_rolling_metrics', chainIds: ['43114'], metrics: ['txCount', 'maxTps', 'avgGasPrice', 'activeAddresses'] },
      { table: 'icm_messages', network: 'mainnet', sourceBlockchainId: lakeside, destinationBlockchainId: cchain },
      { table: 'icm_summary', network: 'mainnet', srcBlockchainId: lakeside, destBlockchainId: cchain },
      { table: 'icm_summary', network: 'mainnet' },
      { table: 'l1_validators', network: 'mainnet', includeInactiveL1Validators: true },
      { table: 'l1_validator_addresses', network: 'mainnet', subnetIds: [LAKESIDE_SUBNET_ID] },
      { table: 'l1_validator_addresses', network: 'mainnet', subnetIds: [LAKESIDE_SUBNET_ID], ...range },
      { table: 'btcb_bridgers', thresholds: [THRESHOLD, '0'], pageSize: 40 },
      { table: 'address_evm_chains', addresses: [DEMO.internalAddresses[0], DEMO.contracts.erc721, STRANGER] },
      { table: 'erc_transfers', chainId: '43114', contracts: [DEMO.contracts.erc721, DEMO.contracts.erc1155], startBlock: 0 },
      { table: 'nft_tokens', chainId: '43114', collections: [DEMO.contracts.erc721, DEMO.contracts.erc1155], pageSize: 50 },
      { table: 'platform_transactions', network: 'mainnet', addresses: [...DEMO.rewardAddresses] },
      { table: 'address_last_activity', network: 'mainnet', blockchainId: 'p-chain', addresses: [...DEMO.rewardAddresses] },
    ];
    lake = mkdtempSync(join(tmpdir(), 'cl-lookups-'));
    for (const wall of WALL) {
      reports.push(await runAtTimes(clock, AT, wall, () => runPipeline(p, { lake, logger: quiet })));
      const n = await rows(lake, [...SNAPSHOTS, ...MERGED].map((t) => `SELECT '${t}' t, count(*)::VARCHAR n FROM ${t}`).join(' UNION ALL '));
      counts.push(Object.fromEntries(n.map((r) => [r.t, r.n])));
    }
  }, 300_000);
  afterAll(async () => {
    await sim?.close();
  });

  it('completes every partition of both runs without rejects or unknown fields', () => {
    expectCleanRun(reports[0]!, { drift: false });
    expect(reports[1]!.status).toBe('ok');
    for (const s of reports[1]!.streams) expect([s.table, s.errors, s.rejects, Object.keys(s.extraFields)]).toEqual([s.table, [], 0, []]);
  });

  it('a rerun adds a snapshot to the rolling tables and nothing to the others', () => {
    for (const t of SNAPSHOTS) expect(Number(counts[1]![t]), t).toBe(2 * Number(counts[0]![t]));
    for (const t of MERGED) expect(counts[1]![t], t).toBe(counts[0]![t]);
  });

  it('every page of every lookup is accepted by the official client', async () => {
    const at = `/v2/chains/43114/rollingWindowMetrics`;
    await listingPages(sim.url, '/v2/chains', 'metricsChains');
    await listingPages(sim.url, '/v2/chains?network=testnet', 'metricsChains');
    for (const m of ROLLING_METRICS) await listingPages(sim.url, `${at}/${m}`, 'rollingWindowMetrics');
    await listingPages(sim.url, '/v2/icm/summary?network=mainnet', 'icmSummary');
    await listingPages(sim.url, `/v2/icm/summary?network=mainnet&srcBlockchainId=${lakeside}`, 'icmSummary');
    await listingPages(sim.url, `/v2/subnets/${LAKESIDE_SUBNET_ID}/validators:getAddresses?pageSize=3`, 'validatorAddresses');
    await listingPages(sim.url, `/v2/chains/43114/btcb/bridged:getAddresses?threshold=0&pageSize=25`, 'btcbBridgers');
    for (const a of [DEMO.internalAddresses[0], STRANGER]) await listingPages(sim.url, `/v1/address/${a}/chains`, 'addressEvmChains');
    for (const c of [DEMO.contracts.erc721, DEMO.contracts.erc1155]) await listingPages(sim.url, `/v1/chains/43114/nfts/collections/${c}/tokens?pageSize=100`, 'nftTokens');
    for (const a of DEMO.rewardAddresses) await listingPages(sim.url, `/v1/networks/mainnet/blockchains/p-chain/lastActivityTimestampByAddresses?addresses=${a}`, 'lastActivity');
    await listingPages(sim.url, `/v1/networks/mainnet/blockchains/p-chain/lastActivityTimestampByAddresses?addresses=${DEMO.rewardAddresses.join(',')}`, 'lastActivity');
  });

  it('declares the rolling metrics the simulator serves', () => {
    expect([...DECLARED_ROLLING_METRICS]).toEqual([...ROLLING_METRICS]);
  });

  it('metrics_chains: the data service\'s chains, by the same blockchain and subnet ids', async () => {
    const got = await rows(lake, `SELECT m.evm_chain_id::VARCHAR id, m.blockchain_id = c.platform_chain_id same_chain, m.subnet_id = c.subnet_id same_subnet, m.network, c.is_testnet
      FROM metrics_chains m LEFT JOIN chains c ON c.chain_id = m.evm_chain_id::VARCHAR ORDER BY 1`);
    expect(got.map((r) => [r.id, r.same_chain, r.same_subnet, r.network, r.is_testnet])).toEqual([
      ['43113', true, true, 'testnet', true], ['43114', true, true, 'mainnet', false], ['432204', true, true, 'mainnet', false],
    ]);
  });

  it('chain_rolling_metrics: the windows the world serves, a count\'s window the sum of chain_metrics\' newest days', async () => {
    const got = await rows(lake, `SELECT metric, last_hour, last_day, last_week, last_month, last_90_days, last_year, all_time FROM chain_rolling_metrics WHERE snapshot_at = (SELECT max(snapshot_at) FROM chain_rolling_metrics)`);
    const want = ['txCount', 'maxTps', 'avgGasPrice', 'activeAddresses'].map((m) => {
      const w = rollingWindow(sim.world, '43114', m as never, AT);
      return line(m, w.lastHour, w.lastDay, w.lastWeek, w.lastMonth, w.last90Days, w.lastYear, w.allTime);
    });
    expect(sorted(got.map((r) => line(r.metric, r.last_hour, r.last_day, r.last_week, r.last_month, r.last_90_days, r.last_year, r.all_time)))).toEqual(sorted(want));
    const [agree] = await rows(lake, `
      WITH d AS (SELECT metric, value, row_number() OVER (PARTITION BY metric ORDER BY timestamp DESC) k FROM chain_metrics WHERE chain_id = '43114' AND time_interval = 'day'),
      s AS (SELECT metric, sum(value) FILTER (k <= 7) w7, sum(value) FILTER (k <= 90) d90, max(value) FILTER (k <= 30) max30 FROM d GROUP BY metric),
      r AS (SELECT * FROM chain_rolling_metrics WHERE snapshot_at = (SELECT min(snapshot_at) FROM chain_rolling_metrics))
      SELECT (SELECT w7 FROM s WHERE metric = 'txCount') = (SELECT last_week FROM r WHERE metric = 'txCount') w7,
        (SELECT d90 FROM s WHERE metric = 'txCount') = (SELECT last_90_days FROM r WHERE metric = 'txCount') d90,
        (SELECT max30 FROM s WHERE metric = 'maxTps') = (SELECT last_month FROM r WHERE metric = 'maxTps') max30`);
    expect(agree).toEqual({ w7: true, d90: true, max30: true });
    // A metric without an hourly series has no last hour.
    expect((await rows(lake, `SELECT DISTINCT metric FROM chain_rolling_metrics WHERE last_hour IS NULL ORDER BY 1`)).map((r) => r.metric)).toEqual(['avgGasPrice', 'maxTps']);
  });

  it('icm_summary: all time is the messages icm_messages lands for the route; the open route counts every message', async () => {
    const [r] = await rows(lake, `SELECT
      (SELECT count(*) FROM icm_messages WHERE source_blockchain_id = '${lakeside}' AND destination_blockchain_id = '${cchain}') listed,
      (SELECT max(all_time) FROM icm_summary WHERE src_blockchain_id = '${lakeside}') summed,
      (SELECT max(all_time) FROM icm_summary WHERE src_blockchain_id = 'all' AND dest_blockchain_id = 'all') every`);
    expect(Number(r!.listed)).toBeGreaterThan(0);
    expect(Number(r!.summed)).toBe(Number(r!.listed));
    const all = icmSummary(sim.world, 'mainnet', {}, AT);
    expect(Number(r!.every)).toBe(all.allTime);
    expect(all.allTime).toBeGreaterThan(Number(r!.listed));
    expect(all.lastHour as number).toBeLessThanOrEqual(all.lastDay as number);
    expect(icmOf(sim.world).list('mainnet', {}, AT).length).toBe(all.allTime);
  });

  it('l1_validator_addresses: the owners of the L1 validations l1_validators lists, narrowed by the range', async () => {
    const got = await rows(lake, `SELECT time_range, sort_key, address FROM l1_validator_addresses`);
    const whole = got.filter((r) => r.time_range === '-');
    const listed = await rows(lake, `SELECT DISTINCT validation_id, unnest(remaining_balance_owner_addresses) address FROM l1_validators WHERE subnet_id = '${LAKESIDE_SUBNET_ID}'`);
    expect(listed.length).toBeGreaterThan(2);
    expect(sorted(whole.map((r) => line(r.sort_key, r.address)))).toEqual(sorted(listed.map((r) => line(r.validation_id, r.address))));
    const ranged = got.filter((r) => r.time_range !== '-');
    const want = validatorAddresses(sim.world, 'mainnet', LAKESIDE_SUBNET_ID, range, AT);
    expect(sorted(ranged.map((r) => line(r.sort_key, r.address)))).toEqual(sorted(want.flatMap((v) => v.addresses.map((a) => line(v.sortKey, a)))));
    expect(ranged.length).toBeLessThan(whole.length);
  });

  it('btcb_bridgers: every bridger at or above the threshold, keys unique', async () => {
    const got = await rows(lake, `SELECT threshold, address, sort_key FROM btcb_bridgers`);
    for (const t of [THRESHOLD, '0']) {
      const want = btcbBridgers(sim.world, BigInt(t)).map((a) => line(t, a.address.toLowerCase(), a.sortKey));
      expect(sorted(got.filter((r) => r.threshold === t).map((r) => line(r.threshold, r.address, r.sort_key)))).toEqual(sorted(want));
    }
    expect(got.filter((r) => r.threshold === '0').length).toBeGreaterThan(got.filter((r) => r.threshold === THRESHOLD).length);
    expect(got.filter((r) => r.threshold === THRESHOLD).length).toBeGreaterThan(0);
  });

  it('address_evm_chains: an active address and a collection on the C-Chain, an unknown address on none', async () => {
    const got = await rows(lake, `SELECT address, chain_id, blockchain_id FROM address_evm_chains ORDER BY 1, 2`);
    expect(got).toEqual(sorted([DEMO.internalAddresses[0].toLowerCase(), DEMO.contracts.erc721.toLowerCase()]).map((address) => ({ address, chain_id: '43114', blockchain_id: cchain })));
  });

  it('nft_tokens: every token the collections\' transfers carry, an ERC-721\'s owner the receiver of its newest transfer', async () => {
    const got = await rows(lake, `SELECT token_address, token_id, token_type, owner_address FROM nft_tokens`);
    const want = [DEMO.contracts.erc721, DEMO.contracts.erc1155].flatMap((c) =>
      collectionTokens(sim.world.evm, sim.world.chain('43114')!, c, AT).map((t) => line(t.address.toLowerCase(), t.tokenId, t.ercType, 'ownerAddress' in t ? t.ownerAddress?.toLowerCase() : undefined)));
    expect(sorted(got.map((r) => line(r.token_address, r.token_id, r.token_type, r.owner_address)))).toEqual(sorted(want));
    const [k] = await rows(lake, `SELECT count(*) n, count(DISTINCT (token_address, token_id)) keys FROM nft_tokens`);
    expect(k!.keys).toBe(k!.n);
    const [agree] = await rows(lake, `
      WITH last AS (SELECT token_address, token_id, arg_max(to_address, (block_number, log_index)) holder FROM erc_transfers WHERE token_type = 'ERC-721' GROUP BY 1, 2)
      SELECT count(*) n, count(*) FILTER (l.holder = t.owner_address) same FROM nft_tokens t JOIN last l USING (token_address, token_id)`);
    expect(Number(agree!.n)).toBeGreaterThan(10);
    expect(agree!.same).toBe(agree!.n);
    const [distinct] = await rows(lake, `SELECT count(*) n FROM (SELECT DISTINCT token_address, token_id FROM erc_transfers)`);
    expect(distinct!.n).toBe(k!.n);
  });

  it('sql/nft_collection_holders.sql: the holders of the collection\'s newest transfers, their tokens adding up to its tokens', async () => {
    const holders = await rows(lake, readFileSync('sql/nft_collection_holders.sql', 'utf8'));
    const want = new Map<string, number>();
    for (const t of collectionTokens(sim.world.evm, sim.world.chain('43114')!, DEMO.contracts.erc721, AT)) {
      const o = ('ownerAddress' in t ? t.ownerAddress! : '').toLowerCase();
      want.set(o, (want.get(o) ?? 0) + 1);
    }
    expect(new Set(holders.map((h) => h.token_address))).toEqual(new Set([DEMO.contracts.erc721.toLowerCase()]));
    expect(new Map(holders.map((h) => [h.owner_address, Number(h.tokens)]))).toEqual(want);
    expect(holders[0]!.rank).toBe('1');
    expect(Number(holders[0]!.tokens)).toBe(Math.max(...want.values()));
    expect(holders.reduce((a, h) => a + Number(h.share_percent), 0)).toBeCloseTo(100, 0);
  });
  it('address_last_activity: each address\'s newest transaction of platform_transactions, a UTXO of its own', async () => {
    const got = await rows(lake, `SELECT address, epoch(timestamp)::BIGINT t, block_number, tx_hash, utxo_id, is_consumed, chain_name FROM address_last_activity ORDER BY 1`);
    expect(got.length).toBe(2);
    for (const r of got) {
      const want = lastActivity(sim.world.seed, 'mainnet', [r.address], AT)!;
      expect(line(r.t, r.block_number, r.tx_hash, r.utxo_id, r.is_consumed, r.chain_name)).toBe(line(want.timestamp, want.blockNumber, want.txHash, want.utxoId, want.isConsumed, 'p-chain'));
      const body = r.address.replace(/^P-/, '');
      const [newest] = await rows(lake, `SELECT arg_max(tx_hash, block_timestamp) tx, epoch(max(block_timestamp))::BIGINT t FROM platform_transactions WHERE list_contains(addresses, '${body}')`);
      expect(newest).toEqual({ tx: r.tx_hash, t: r.t });
      expect(r.utxo_id).not.toBe('');
    }
  });
});

describe('one EVM address followed through the data service', () => {
  const ACTIVE = DEMO.internalAddresses[0].toLowerCase();
  let sim: Simulator;
  let lake: string;
  let report: RunReport;
  let contracts: string[];

  beforeAll(async () => {
    sim = await startSimulator({ seed: 11 });
    contracts = sim.world.contractsOf('43114').map((c) => c.address);
    const p = loadPipeline('pipelines/demo.yaml');
    for (const s of Object.values(p.sources)) s.url = sim.url;
    const addresses = [ACTIVE];
    p.streams = [
      { table: 'address_transactions', chainId: '43114', addresses, startBlock: 0 },
      { table: 'address_token_transfers', chainId: '43114', addresses, startBlock: 0 },
      { table: 'address_tx_transfers', chainId: '43114', addresses, startBlock: 0 },
      { table: 'address_tx_internals', chainId: '43114', addresses, startBlock: 0 },
      { table: 'address_transactions_v2', chainId: '43114', addresses, startBlock: 0, pageSize: 37 },
      { table: 'address_transactions_v2', chainId: '43114', addresses, startBlock: 0, filterSpamTokens: true },
      { table: 'erc_transfers', chainId: '43114', contracts, startBlock: 0 },
      { table: 'address_evm_chains', addresses },
    ];
    lake = mkdtempSync(join(tmpdir(), 'cl-one-address-'));
    report = await runPipeline(p, { lake, logger: quiet });
  }, 300_000);
  afterAll(async () => {
    await sim?.close();
  });

  it('completes every partition without rejects or unknown fields', () => expectCleanRun(report, { drift: false }));

  it('its full listing carries its token transfers, the very ones of its transfer listings and of the tokens\' own', async () => {
    const cols = 'tx_hash, log_index, token_address, token_id, from_address, to_address, value_raw';
    const [r] = await rows(lake, `SELECT
      (SELECT count(*) FROM address_tx_transfers) nested,
      (SELECT count(DISTINCT token_type) FROM address_tx_transfers) n_types,
      (SELECT count(*) FROM (SELECT ${cols} FROM address_tx_transfers EXCEPT ALL SELECT ${cols} FROM address_token_transfers)) +
      (SELECT count(*) FROM (SELECT ${cols} FROM address_token_transfers EXCEPT ALL SELECT ${cols} FROM address_tx_transfers)) differ,
      (SELECT count(*) FROM (SELECT ${cols} FROM address_token_transfers EXCEPT ALL SELECT ${cols} FROM erc_transfers WHERE '${ACTIVE}' IN (from_address, to_address))) +
      (SELECT count(*) FROM (SELECT ${cols} FROM erc_transfers WHERE '${ACTIVE}' IN (from_address, to_address) EXCEPT ALL SELECT ${cols} FROM address_token_transfers)) unlisted`);
    expect(Number(r!.nested)).toBeGreaterThan(20);
    expect(r).toMatchObject({ n_types: '3', differ: '0', unlisted: '0' });
  });

  it('v2: a row per transaction of the native, transfer and internal listings, counting what each holds', async () => {
    const [r] = await rows(lake, `
      WITH t AS (SELECT tx_hash FROM address_transactions UNION SELECT tx_hash FROM address_tx_transfers UNION SELECT tx_hash FROM address_tx_internals),
      per AS (SELECT tx_hash, count(*) FILTER (token_type = 'ERC-20') e20, count(*) FILTER (token_type = 'ERC-721') e721, count(*) FILTER (token_type = 'ERC-1155') e1155 FROM address_tx_transfers GROUP BY 1),
      calls AS (SELECT tx_hash, count(*) n FROM address_tx_internals GROUP BY 1),
      v AS (SELECT * FROM address_transactions_v2 WHERE listing = 'all')
      SELECT (SELECT count(*) FROM t) txs, (SELECT count(*) FROM v) v2, (SELECT count(*) FROM v WHERE tx_hash NOT IN (SELECT tx_hash FROM t)) strangers,
        (SELECT count(*) FROM v LEFT JOIN per USING (tx_hash) LEFT JOIN calls USING (tx_hash)
          WHERE v.erc20_transfers <> coalesce(e20, 0) OR v.erc721_transfers <> coalesce(e721, 0) OR v.erc1155_transfers <> coalesce(e1155, 0) OR v.internal_transactions <> coalesce(calls.n, 0)) miscounted,
        (SELECT count(*) FROM v JOIN address_transactions a USING (tx_hash) WHERE a.value_raw <> v.value_raw OR a.block_number <> v.block_number OR a.from_address <> v.from_address) native_differs,
        (SELECT sum(malicious_erc20_transfers) FROM v) malicious,
        (SELECT count(*) FROM address_tx_transfers WHERE token_symbol = 'LMΩ') spam_listed`);
    expect(r).toMatchObject({ strangers: '0', miscounted: '0', native_differs: '0' });
    expect(r!.v2).toBe(r!.txs);
    expect(Number(r!.malicious)).toBeGreaterThan(0);
    expect(String(r!.malicious)).toBe(r!.spam_listed);
    const [f] = await rows(lake, `SELECT
      (SELECT sum(malicious_erc20_transfers) FROM address_transactions_v2 WHERE listing = 'spam_filtered') malicious,
      (SELECT sum(erc20_transfers) FROM address_transactions_v2 WHERE listing = 'spam_filtered') + (SELECT sum(malicious_erc20_transfers) FROM address_transactions_v2 WHERE listing = 'all') kept_and_spam,
      (SELECT sum(erc20_transfers) FROM address_transactions_v2 WHERE listing = 'all') every,
      (SELECT count(*) FROM address_transactions_v2 WHERE listing = 'spam_filtered') filtered_txs`);
    expect(String(f!.malicious)).toBe('0');
    expect(f!.kept_and_spam).toBe(f!.every);
    expect(Number(f!.filtered_txs)).toBeLessThan(Number(r!.v2));
  });

  it('v2 pages conform to the published schema, newest first, spam filtered when asked', async () => {
    const all = (await listingPages(sim.url, `/v2/chains/43114/addresses/${ACTIVE}/transactions?pageSize=100`, 'transactionDetailsV2')).flatMap((b) => b.transactions);
    const blocks = all.map((t: any) => Number(t.nativeTransaction.blockNumber));
    expect(blocks).toEqual([...blocks].sort((a, b) => b - a));
    // The copied schema is a check that can fail: a v1 item (no token reputation) is refused.
    const withSpam = all.find((t: any) => t.erc20Transfers.length > 0);
    const { tokenReputation: _r, ...v1Token } = withSpam.erc20Transfers[0].erc20Token;
    const v1 = { transactions: [{ ...withSpam, erc20Transfers: [{ ...withSpam.erc20Transfers[0], erc20Token: v1Token }] }] };
    expect(publishedProblems('transactionDetailsV2', v1)).toBe('$.transactions[0].erc20Transfers[0].erc20Token.tokenReputation: missing');
    const tokens = all.flatMap((t: any) => t.erc20Transfers.map((x: any) => x.erc20Token.tokenReputation));
    expect(new Set(tokens)).toEqual(new Set(['Malicious', 'Benign']));
    const filtered = (await listingPages(sim.url, `/v2/chains/43114/addresses/${ACTIVE}/transactions?pageSize=100&filterSpamTokens=true&sortOrder=asc`, 'transactionDetailsV2')).flatMap((b) => b.transactions);
    expect(filtered.flatMap((t: any) => t.erc20Transfers.map((x: any) => x.erc20Token.tokenReputation))).not.toContain('Malicious');
    expect(Number(filtered[0].nativeTransaction.blockNumber)).toBe(Math.min(...blocks));
  });

  it('is active on the C-Chain, where its listings are', async () => {
    expect(await rows(lake, 'SELECT address, chain_id FROM address_evm_chains')).toEqual([{ address: ACTIVE, chain_id: '43114' }]);
  });
});

describe("the key's RPC usage, subnet and primary network", () => {
  const KEY = 'rpc-usage-key';
  const clock = { t: DEMO.now as number };
  let sim: Simulator;
  let lake: string;
  const reports: RunReport[] = [];
  let apiKeyId: string;
  const streams = [
    { table: 'subnet_rpc_usage_metrics', chainIds: ['43114', '432204'] },
    { table: 'subnet_rpc_usage_metrics', chainIds: ['43114'], timeInterval: 'hourly', groupBy: 'rpcMethod' },
    { table: 'primary_rpc_usage_metrics', network: 'mainnet', groupBy: 'responseCode' },
    { table: 'primary_rpc_usage_metrics', network: 'mainnet', timeInterval: 'hourly', rpcMethod: 'eth_getLogs' },
  ];

  beforeAll(async () => {
    sim = await startSimulator({ seed: 11, apiKeys: [KEY], worldNow: () => clock.t });
    apiKeyId = sim.usage.caller(KEY).apiKeyId;
    const p = loadPipeline('pipelines/demo.yaml');
    for (const s of Object.values(p.sources)) s.url = sim.url;
    p.sources.data!.apiKey = KEY;
    p.streams = streams;
    lake = mkdtempSync(join(tmpdir(), 'cl-rpc-usage-'));
    // A run, and one a day and a half later: the second refetches from the newest point on.
    for (const at of [DEMO.now + 3600, DEMO.now + 36 * 3600]) {
      clock.t = at;
      reports.push(await runPipeline(p, { lake, logger: quiet }));
    }
  }, 300_000);
  afterAll(async () => {
    await sim?.close();
  });

  it('completes every partition without rejects or unknown fields', () => {
    for (const r of reports) expectCleanRun(r, { drift: false });
  });

  it('lands every point once: those before the first run\'s newest as it saw them, the rest as the last run did', async () => {
    const RUNS = [DEMO.now + 3600, DEMO.now + 36 * 3600];
    const served = (at: number) => {
      const out: string[] = [];
      for (const s of streams) {
        const scopes = s.table === 'subnet_rpc_usage_metrics' ? s.chainIds! : ['mainnet'];
        for (const scope of scopes) {
          const q = { timeInterval: (s.timeInterval ?? 'daily') as 'daily', ...(s.groupBy ? { groupBy: s.groupBy as 'rpcMethod' } : {}), ...(s.rpcMethod ? { rpcMethod: s.rpcMethod } : {}) };
          for (const pt of rpcUsage(sim.world.seed, apiKeyId, scope, q, at)) for (const v of pt.values) out.push(line(s.table, scope, q.timeInterval, s.rpcMethod ? `rpcMethod=${s.rpcMethod}` : '', pt.timestamp, v.groupedBy, v.groupValue, v.totalRequests, v.apiCreditsUsed, v.invalidRequests, v.apiCreditsWasted));
        }
      }
      return out;
    };
    // Where the second run started each series again: the first run's newest point.
    const refetched = (l: string) => {
      const [, , interval, , t] = l.split('|');
      const step = interval === 'hourly' ? 3600 : 86_400;
      return Number(t) >= Math.floor(RUNS[0]! / step) * step;
    };
    const cols = `time_interval, filters, epoch(timestamp)::BIGINT t, grouped_by, group_value, total_requests, api_credits_used, invalid_requests, api_credits_wasted`;
    const got = (await rows(lake, `SELECT 'subnet_rpc_usage_metrics' tbl, chain_id sc, ${cols} FROM subnet_rpc_usage_metrics UNION ALL SELECT 'primary_rpc_usage_metrics', network, ${cols} FROM primary_rpc_usage_metrics`))
      .map((r) => line(r.tbl, r.sc, r.time_interval, r.filters, r.t, r.grouped_by, r.group_value, r.total_requests, r.api_credits_used, r.invalid_requests, r.api_credits_wasted));
    expect(sorted(got)).toEqual(sorted([...served(RUNS[0]!).filter((l) => !refetched(l)), ...served(RUNS[1]!).filter(refetched)]));
    // The retention window moved on between the runs: the lake keeps what the service no longer serves.
    expect(got.length).toBeGreaterThan(served(RUNS[1]!).length);
  });

  it('agrees across tables: a day is the sum of its hours, the methods sum to the whole, the codes to the requests', async () => {
    const [r] = await rows(lake, `
      WITH d AS (SELECT timestamp, total_requests, api_credits_used FROM subnet_rpc_usage_metrics WHERE chain_id = '43114' AND time_interval = 'daily'),
      h AS (SELECT date_trunc('day', timestamp) d0, sum(total_requests) n, sum(api_credits_used) cu FROM subnet_rpc_usage_metrics WHERE time_interval = 'hourly' GROUP BY 1)
      SELECT count(*) n_days, count(*) FILTER (d.total_requests = h.n AND d.api_credits_used = h.cu) same FROM d JOIN h ON h.d0 = d.timestamp
        WHERE d.timestamp > (SELECT min(timestamp) FROM d) AND d.timestamp < (SELECT max(timestamp) FROM d)`);
    expect(Number(r!.n_days)).toBeGreaterThan(5);
    expect(r!.same).toBe(r!.n_days);
    const [codes] = await rows(lake, `SELECT count(DISTINCT group_value) n, bool_and(grouped_by = 'responseCode') ok FROM primary_rpc_usage_metrics WHERE filters = ''`);
    expect(codes).toEqual({ n: '2', ok: true });
  });

  it('answers in the published shapes: the subnet series by the official client, the primary network\'s by the document', async () => {
    const head = { headers: { 'x-glacier-api-key': KEY } };
    for (const path of ['/v1/subnetRpcUsageMetrics?chainId=43114&groupBy=responseCode&timeInterval=hourly', '/v1/subnetRpcUsageMetrics?chainId=432204']) {
      const r = await fetch(sim.url + path, head);
      expect(r.status).toBe(200);
      expect(officialProblems('subnetRpcUsage', await r.json())).toBe('');
    }
    for (const path of ['/v1/primaryNetworkRpcUsageMetrics?network=mainnet&groupBy=country', '/v1/primaryNetworkRpcUsageMetrics?network=fuji&timeInterval=weekly']) {
      const r = await fetch(sim.url + path, head);
      expect(r.status).toBe(200);
      expect(publishedProblems('primaryRpcUsage', await r.json())).toBe('');
    }
    expect((await fetch(sim.url + '/v1/primaryNetworkRpcUsageMetrics?network=mainnet')).status).toBe(401);
    expect(publishedProblems('primaryRpcUsage', { aggregateDuration: '1d', metrics: [], network: 'fuji' })).toBe('$.network: "fuji" not in ["mainnet","testnet"]');
  });
});

describe('the entries of the issue-40 tables', () => {
  const check = pipelineProblem;

  it('refuses a bad value naming its place, and takes the good ones', () => {
    expect(check([{ table: 'chain_rolling_metrics', chainIds: ['43114'], metrics: ['txCount', 'cumulativeTxCount'] }]))
      .toBe('x.yaml: streams[0].metrics[1]: "cumulativeTxCount" has no rolling windows (gasUsed, txCount, avgGps, maxGps, avgTps, maxTps, avgGasPrice, maxGasPrice, feesPaid, contracts, deployers, activeAddresses, activeSenders)');
    expect(check([{ table: 'chain_rolling_metrics', chainIds: ['total'], metrics: ['txCount'] }])).toContain('streams[0].chainIds[0]: "total": rolling windows are per EVM chain');
    expect(check([{ table: 'btcb_bridgers', thresholds: ['0.5'] }])).toBe('x.yaml: streams[0].thresholds[0]: "0.5" is not a whole number (satoshis of BTC.b)');
    expect(check([{ table: 'icm_summary', network: 'mainnet', srcBlockchainId: 'C' }])).toContain('streams[0].srcBlockchainId: "C" is not a blockchain id');
    expect(check([{ table: 'l1_validator_addresses', network: 'mainnet', subnetIds: [LAKESIDE_SUBNET_ID], startTimestamp: '2025-11-01', endTimestamp: '2025-10-01' }])).toContain('streams[0].endTimestamp: startTimestamp 2025-11-01T00:00:00Z must be before endTimestamp 2025-10-01T00:00:00Z (the end is excluded)');
    expect(check([{ table: 'subnet_rpc_usage_metrics', chainIds: ['C-Chain'] }])).toBe('x.yaml: streams[0].chainIds[0]: "C-Chain" is not an EVM chain id (digits, such as 43114)');
    expect(check([{ table: 'address_last_activity', network: 'mainnet', blockchainId: 'P', addresses: [DEMO.rewardAddresses[0]] }])).toContain('streams[0].blockchainId');
    expect(check([{ table: 'address_transactions_v2', chainId: '43114', addresses: [STRANGER], filterSpamTokens: 'yes' }])).toContain('streams[0].filterSpamTokens');
    expect(check([
      { table: 'metrics_chains', network: 'testnet' }, { table: 'nft_tokens', chainId: '43114', collections: [DEMO.contracts.erc721] },
      { table: 'address_evm_chains', addresses: [STRANGER] }, { table: 'primary_rpc_usage_metrics', network: 'mainnet', groupBy: 'country' },
    ])).toBe('');
  });
});
