// The data-service endpoint tables (blocks, block transactions, balances, subnets, blockchains,
// contracts, address chains, chains) and every metric: pipelines run in-process against the
// simulator, and each table is compared row for row with what the simulator's world served.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkPipeline, loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import type { RunReport } from '../../src/pipeline/report.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { DEMO } from '../../src/simulator/world.js';
import { METRICS, TIME_INTERVALS, dayOnly, type Metric, type TimeInterval } from '../../src/simulator/series.js';
import { StateStore } from '../../src/state/store.js';
import { listingsOf } from '../../src/state/cursor.js';
import { expectCleanRun, lakeRows, line, quiet, scriptedServer, sorted } from '../helpers.js';

const TABLES = ['blocks', 'block_transactions', 'native_balances', 'erc20_balances', 'subnets', 'blockchains', 'contracts', 'address_chains', 'chains'];
const tmp = () => mkdtempSync(join(tmpdir(), 'cl-data-'));

const rows = lakeRows;

function demo(url: string, tables = TABLES): Pipeline {
  const p = loadPipeline('pipelines/demo.yaml');
  p.sources.data.url = url;
  p.sources.metrics.url = url;
  p.streams = p.streams.filter((s) => tables.includes(s.table));
  return p;
}

const low = (a: string | undefined) => (a === undefined ? null : a.toLowerCase());

describe('data-service endpoint tables on the demo pipeline', () => {
  let sim: Simulator;
  let lake: string;
  let p: Pipeline;
  let report: RunReport;
  let t0: number;
  let t1: number;
  const cfg = (table: string) => p.streams.find((s) => s.table === table)!;
  const blockWindow = (table: string) => [cfg(table).startBlock as number, cfg(table).endBlock as number] as const;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 11 });
    lake = tmp();
    p = demo(sim.url);
    t0 = Math.floor(Date.now() / 1000);
    report = await runPipeline(p, { lake, logger: quiet, flushRows: 200 });
    t1 = Math.ceil(Date.now() / 1000);
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('completes every partition without rejects', () => expectCleanRun(report));


  it('blocks: every block of the window, as served', async () => {
    const [start, end] = blockWindow('blocks');
    const want: string[] = [];
    for (let n = start; n < end; n++) {
      const b = sim.world.block('43114', n);
      want.push(line(b.blockNumber, b.blockTimestamp, b.blockHash, b.parentHash, b.txCount, b.cumulativeTransactions, b.gasUsed, b.gasLimit, b.baseFee, b.gasCost, b.feesSpent));
    }
    const got = (await rows(lake, `SELECT block_number, epoch(block_timestamp)::BIGINT ts, block_hash, parent_hash, tx_count, cumulative_transactions, gas_used, gas_limit, base_fee_raw, gas_cost_raw, fees_spent_raw FROM blocks`)).map((r) =>
      line(r.block_number, r.ts, r.block_hash, r.parent_hash, r.tx_count, r.cumulative_transactions, r.gas_used, r.gas_limit, r.base_fee_raw, r.gas_cost_raw, r.fees_spent_raw),
    );
    expect(got.length).toBe(end - start);
    expect(sorted(got)).toEqual(sorted(want));
    const [types] = await rows(lake, `SELECT typeof(base_fee) b, typeof(gas_used) g, typeof(tx_count) t, count(*) FILTER (WHERE base_fee::VARCHAR <> base_fee_raw) AS off FROM blocks GROUP BY ALL`);
    expect(types).toEqual({ b: 'BIGNUM', g: 'BIGINT', t: 'INTEGER', off: '0' });
    // Each block fetched once, and the head (the latest-blocks listing) asked once a run for the
    // chain: counted by blocks or by block_transactions, whichever asked it first.
    const asked = (t: string) => report.streams.find((s) => s.table === t)!.requests;
    expect(asked('blocks') - (end - start)).toBeLessThanOrEqual(1);
    expect(asked('blocks') - (end - start)).toBeGreaterThanOrEqual(0);
  });

  it('block_transactions: every transaction of every block, paged inside blocks, exact amounts', async () => {
    const [start, end] = blockWindow('block_transactions');
    const want: string[] = [];
    for (let n = start; n < end; n++)
      for (const t of sim.world.blockTransactions('43114', n))
        want.push(line(t.txHash, t.blockNumber, t.blockTimestamp, t.blockHash, t.blockIndex, t.txStatus, t.txType, low(t.from.address), low(t.to.address), t.to.name, t.value, t.gasLimit, t.gasUsed, t.gasPrice, t.nonce, t.method.callType, t.method.methodHash, t.method.methodName));
    const got = (
      await rows(lake, `SELECT tx_hash, block_number, epoch(block_timestamp)::BIGINT ts, block_hash, block_index, tx_status, tx_type, from_address, to_address, to_name, value_raw, gas_limit, gas_used, gas_price_raw, nonce, call_type, method_hash, method_name FROM block_transactions`)
    ).map((r) => line(r.tx_hash, r.block_number, r.ts, r.block_hash, r.block_index, r.tx_status, r.tx_type, r.from_address, r.to_address, r.to_name, r.value_raw, r.gas_limit, r.gas_used, r.gas_price_raw, r.nonce, r.call_type, r.method_hash, r.method_name));
    expect(got.length).toBe(want.length);
    expect(sorted(got)).toEqual(sorted(want));
    const [check] = await rows(lake, `SELECT
        count(*) FILTER (WHERE length(value_raw) > 38 AND value::VARCHAR = ltrim(value_raw, '0')) AS over38,
        count(*) FILTER (WHERE length(value_raw) <= 38 AND value::VARCHAR <> value_raw) AS mismatched,
        count(DISTINCT call_type) AS call_types, count(DISTINCT tx_status) AS statuses
      FROM block_transactions`);
    expect(Number(check!.over38)).toBeGreaterThan(0);
    expect(check).toMatchObject({ mismatched: '0', call_types: '3', statuses: '2' });
    const s = report.streams.find((x) => x.table === 'block_transactions')!;
    expect(s.over38).toBe(Number(check!.over38));
    // pageSize 4: blocks of more than 4 transactions took several pages.
    expect(s.pages).toBeGreaterThan(end - start);
  });

  it('native_balances: one snapshot per holder at the pinned head, with its block time and price', async () => {
    const head = sim.world.headBlock('43114');
    const ts = sim.world.block('43114', head).blockTimestamp;
    const want = (cfg('native_balances').addresses as string[]).map((a) => {
      const b = sim.world.nativeBalance('43114', a, head, 'usd');
      return line(a, head, ts, b.symbol, b.decimals, b.balance, b.price?.currencyCode, b.price?.value, b.balanceValue?.value);
    });
    const got = await rows(lake, `SELECT address, block_number, epoch(block_timestamp)::BIGINT ts, epoch(snapshot_at)::BIGINT taken, token_symbol, token_decimals, balance_raw, price_currency, price_value, balance_value FROM native_balances`);
    expect(sorted(got.map((r) => line(r.address, r.block_number, r.ts, r.token_symbol, r.token_decimals, r.balance_raw, r.price_currency, r.price_value, r.balance_value)))).toEqual(sorted(want));
    for (const r of got) {
      expect(Number(r.taken)).toBeGreaterThanOrEqual(t0);
      expect(Number(r.taken)).toBeLessThanOrEqual(t1);
    }
  });

  it('erc20_balances: every token of every holder in the asked currency, spam included when asked', async () => {
    const head = sim.world.headBlock('43114');
    const c = cfg('erc20_balances');
    const want = (c.addresses as string[]).flatMap((a) =>
      sim.world.erc20Balances('43114', a, { block: head, currency: 'eur', filterSpamTokens: false }).map((b) =>
        line(a, head, low(b.address), b.symbol, b.balance, b.tokenReputation, b.price?.currencyCode, b.price?.value, b.balanceValue?.value),
      ),
    );
    const got = (await rows(lake, `SELECT address, block_number, token_address, token_symbol, balance_raw, token_reputation, price_currency, price_value, balance_value FROM erc20_balances`)).map((r) =>
      line(r.address, r.block_number, r.token_address, r.token_symbol, r.balance_raw, r.token_reputation, r.price_currency, r.price_value, r.balance_value),
    );
    expect(sorted(got)).toEqual(sorted(want));
    const [check] = await rows(lake, `SELECT count(*) FILTER (WHERE token_reputation = 'Malicious') spam, count(*) FILTER (WHERE balance::VARCHAR = ltrim(balance_raw, '0') AND length(balance_raw) > 38) over38, count(DISTINCT price_currency) currencies FROM erc20_balances`);
    expect(Number(check!.spam)).toBeGreaterThan(0);
    expect(Number(check!.over38)).toBeGreaterThan(0);
    expect(check!.currencies).toBe('1');
  });

  it('subnets and blockchains: every record as served, genesis whole and its settings as columns', async () => {
    const subnets = [...sim.world.subnets('mainnet')];
    const wantS = subnets.map((s) => line(s.subnetId, s.createBlockTimestamp, s.createBlockIndex, s.subnetOwnershipInfo.addresses, s.subnetOwnershipInfo.threshold, s.isL1, s.l1ConversionTransactionHash, low(s.l1ValidatorManagerDetails?.contractAddress), s.blockchains.map((b) => b.blockchainId)));
    const gotS = (await rows(lake, `SELECT subnet_id, epoch(create_block_timestamp)::BIGINT ts, create_block_index, owner_addresses, owner_threshold, is_l1, l1_conversion_tx_hash, l1_validator_manager_address, blockchain_ids FROM subnets`)).map((r) =>
      line(r.subnet_id, r.ts, r.create_block_index, r.owner_addresses, r.owner_threshold, r.is_l1, r.l1_conversion_tx_hash, r.l1_validator_manager_address, r.blockchain_ids),
    );
    expect(sorted(gotS)).toEqual(sorted(wantS));

    const PRE = ['txAllowListConfig', 'contractDeployerAllowListConfig', 'contractNativeMinterConfig', 'feeManagerConfig', 'rewardManagerConfig'] as const;
    const wantB = subnets.flatMap((s) =>
      s.blockchains.map((b) => {
        const g = typeof b.genesisData === 'string' ? (b.genesisData.startsWith('{') ? JSON.parse(b.genesisData) : undefined) : b.genesisData;
        const config = g?.config;
        return line(
          b.blockchainId, b.subnetId, b.blockchainName, b.vmId, b.evmChainId, s.isL1, g === undefined ? undefined : JSON.stringify(g),
          typeof b.genesisData === 'string' && g === undefined ? b.genesisData : undefined, config?.feeConfig?.minBaseFee, config?.feeConfig?.targetGas,
          g && PRE.filter((k) => config?.[k]), config?.txAllowListConfig?.adminAddresses?.map((a: string) => a.toLowerCase()), config?.feeManagerConfig?.adminAddresses?.map((a: string) => a.toLowerCase()),
        );
      }),
    );
    const gotB = (
      await rows(lake, `SELECT blockchain_id, subnet_id, blockchain_name, vm_id, evm_chain_id, subnet_is_l1, genesis_data, genesis_data_text, fee_min_base_fee, fee_target_gas, precompiles, tx_allow_list_admins, fee_manager_admins FROM blockchains`)
    ).map((r) => line(r.blockchain_id, r.subnet_id, r.blockchain_name, r.vm_id, r.evm_chain_id, r.subnet_is_l1, r.genesis_data, r.genesis_data_text, r.fee_min_base_fee, r.fee_target_gas, r.precompiles, r.tx_allow_list_admins, r.fee_manager_admins));
    expect(sorted(gotB)).toEqual(sorted(wantB));
    // Every form the world serves is in the demo: genesis as an object, as JSON text, as bytes, and none.
    const forms = new Set(subnets.flatMap((s) => s.blockchains.map((b) => (b.genesisData === undefined ? 'none' : typeof b.genesisData === 'object' ? 'object' : b.genesisData.startsWith('{') ? 'json' : 'bytes'))));
    expect([...forms].sort()).toEqual(['bytes', 'json', 'none', 'object']);
    const [lake432204] = await rows(lake, `SELECT precompiles, fee_gas_limit FROM blockchains WHERE evm_chain_id = 432204`);
    expect(lake432204!.precompiles).toEqual([...PRE]);
  });

  it('contracts: the metadata of each listed address, links as type:url and tags as lists', async () => {
    const want = (cfg('contracts').addresses as string[]).map((a) => {
      const m = sim.world.contractMetadata('43114', a)!;
      return line(low(m.address), m.ercType, m.name, m.symbol, m.decimals, m.description, m.resourceLinks?.map((l) => `${l.type}:${l.url}`), m.tags, m.logoAsset?.imageUri, low(m.deploymentDetails?.deployerAddress), low(m.deploymentDetails?.deployerContractAddress));
    });
    const got = (await rows(lake, `SELECT address, erc_type, name, symbol, decimals, description, resource_links, tags, logo_uri, deployer_address, deployer_contract_address FROM contracts`)).map((r) =>
      line(r.address, r.erc_type, r.name, r.symbol, r.decimals, r.description, r.resource_links, r.tags, r.logo_uri, r.deployer_address, r.deployer_contract_address),
    );
    expect(sorted(got)).toEqual(sorted(want));
    const types = await rows(lake, `SELECT DISTINCT erc_type FROM contracts ORDER BY 1`);
    expect(types.map((t) => t.erc_type)).toEqual(['ERC-1155', 'ERC-20', 'ERC-721', 'UNKNOWN']);
  });

  it('address_chains: one row per address and chain it touched', async () => {
    const want = sim.world.addressChains('mainnet', cfg('address_chains').addresses as string[]).flatMap((a) => a.blockchainIds.map((id) => line(a.address, id)));
    const got = (await rows(lake, `SELECT address, blockchain_id, chain_name FROM address_chains`)).map((r) => line(r.address, r.blockchain_id));
    expect(sorted(got)).toEqual(sorted(want));
    const names = await rows(lake, `SELECT DISTINCT chain_name FROM address_chains ORDER BY 1`);
    expect(names.every((n) => ['C-Chain', 'P-Chain', 'X-Chain'].includes(n.chain_name))).toBe(true);
  });

  it('chains: the supported-chains list', async () => {
    const want = sim.world.supportedChains().map((c) => line(c.chainId, c.status, c.chainName, c.platformChainId, c.subnetId, c.vmName, c.isTestnet, low(c.utilityAddresses?.multicall), c.networkToken.symbol, c.enabledFeatures));
    const got = (await rows(lake, `SELECT chain_id, status, chain_name, platform_chain_id, subnet_id, vm_name, is_testnet, multicall_address, network_token_symbol, enabled_features FROM chains`)).map((r) =>
      line(r.chain_id, r.status, r.chain_name, r.platform_chain_id, r.subnet_id, r.vm_name, r.is_testnet, r.multicall_address, r.network_token_symbol, r.enabled_features),
    );
    expect(sorted(got)).toEqual(sorted(want));
  });

  it('a second run on the same head adds nothing and replaces each snapshot in place', async () => {
    const before = await rows(lake, TABLES.map((t) => `SELECT '${t}' t, count(*) n FROM ${t}`).join(' UNION ALL ') + ' ORDER BY t');
    const second = await runPipeline(p, { lake, logger: quiet });
    expect(second.status).toBe('ok');
    expect(second.streams.find((s) => s.table === 'blocks')!.rows).toBe(0);
    expect(second.streams.find((s) => s.table === 'block_transactions')!.rows).toBe(0);
    expect(await rows(lake, TABLES.map((t) => `SELECT '${t}' t, count(*) n FROM ${t}`).join(' UNION ALL ') + ' ORDER BY t')).toEqual(before);
  });
});

describe('a moving head', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (closers.length) await closers.pop()!();
  });

  it('appends only new blocks and their transactions, and adds a balance snapshot at the new head', async () => {
    const clock = { t: DEMO.now as number };
    const sim = await startSimulator({ seed: 5, worldNow: () => clock.t });
    closers.push(() => sim.close());
    const chainId = DEMO.subnetChainId;
    const start = sim.world.headBlock(chainId) - 30;
    const holder = DEMO.internalAddresses[0];
    const p = checkPipeline(
      {
        name: 'moving',
        sources: { data: { url: sim.url } },
        streams: [
          { table: 'blocks', chainId, startBlock: start },
          { table: 'block_transactions', chainId, startBlock: start, pageSize: 3 },
          { table: 'native_balances', chainId, addresses: [holder] },
          { table: 'erc20_balances', chainId, addresses: [holder] },
        ],
      },
      'moving.yaml',
    );
    const lake = tmp();
    expect((await runPipeline(p, { lake, logger: quiet, flushRows: 40 })).status).toBe('ok');
    const firstHead = sim.world.headBlock(chainId);
    clock.t += 150; // 30 blocks of 5 s
    const second = await runPipeline(p, { lake, logger: quiet, flushRows: 40 });
    expect(second.status).toBe('ok');
    const head = sim.world.headBlock(chainId);
    expect(head).toBe(firstHead + 30);
    expect(second.streams.find((s) => s.table === 'blocks')!.rows).toBe(30);

    const blocks = (await rows(lake, 'SELECT block_number, block_hash FROM blocks')).map((r) => line(r.block_number, r.block_hash));
    const wantBlocks: string[] = [];
    const wantTxs: string[] = [];
    for (let n = start; n <= head; n++) {
      wantBlocks.push(line(n, sim.world.block(chainId, n).blockHash));
      for (const t of sim.world.blockTransactions(chainId, n)) wantTxs.push(line(t.txHash, n, t.blockIndex));
    }
    expect(sorted(blocks)).toEqual(sorted(wantBlocks));
    const txs = (await rows(lake, 'SELECT tx_hash, block_number, block_index FROM block_transactions')).map((r) => line(r.tx_hash, r.block_number, r.block_index));
    expect(sorted(txs)).toEqual(sorted(wantTxs));

    // Two snapshots, one per head, each as the world had it at that block.
    const snaps = await rows(lake, `SELECT block_number, balance_raw FROM native_balances ORDER BY block_number`);
    expect(snaps.map((r) => line(r.block_number, r.balance_raw))).toEqual(
      [firstHead, head].map((b) => line(b, sim.world.nativeBalance(chainId, holder, b).balance)),
    );
    const tokens = (await rows(lake, `SELECT block_number, token_address, balance_raw FROM erc20_balances`)).map((r) => line(r.block_number, r.token_address, r.balance_raw));
    const wantTokens = [firstHead, head].flatMap((b) => sim.world.erc20Balances(chainId, holder, { block: b }).map((x) => line(b, low(x.address), x.balance)));
    expect(sorted(tokens)).toEqual(sorted(wantTokens));
  });
});

describe('resuming block_transactions inside a block', () => {
  it('continues from the stored page token of the block it stopped in; the table ends exact, without duplicates', async () => {
    const sim = await startSimulator({ seed: 3 });
    const head = sim.world.headBlock('43114');
    const start = head - 40;
    const end = head - 20;
    // A proxy that answers 404 (not retried) to the 7th request inside a block, when told to.
    let failAt: number | undefined = 7;
    let inside = 0;
    const seen: string[] = [];
    const proxy = await scriptedServer((req, res) => {
      const url = req.url ?? '/';
      seen.push(url);
      if (/\/transactions\?.*pageToken=/.test(url) && ++inside === failAt) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: 'cut here', error: 'Not Found', statusCode: 404 }));
        return;
      }
      fetch(sim.url + url).then(async (r) => {
        res.writeHead(r.status, { 'content-type': 'application/json' });
        res.end(await r.text());
      });
    });
    try {
      const p = checkPipeline(
        { name: 'resume', sources: { data: { url: proxy.url, retries: 0 } }, streams: [{ table: 'block_transactions', chainId: '43114', startBlock: start, endBlock: end, pageSize: 2 }] },
        'resume.yaml',
      );
      const lake = tmp();
      const cut = await runPipeline(p, { lake, logger: quiet, flushRows: 1 });
      expect(cut.status).toBe('failed');
      expect(cut.streams[0]!.errors.join()).toContain('cut here');
      const token = listingsOf(new StateStore(lake).load('block_transactions', '43114').cursor.window)[0]?.token;
      const m = /^(\d+):(.+)$/.exec(token ?? '');
      expect(m, `checkpoint token ${token}`).not.toBeNull();
      const [, block, inner] = m!;
      const committed = Number((await rows(lake, 'SELECT count(*) n FROM block_transactions'))[0]!.n);
      expect(committed).toBeGreaterThan(0);

      failAt = undefined;
      seen.length = 0;
      const resumed = await runPipeline(p, { lake, logger: quiet, flushRows: 1 });
      expect(resumed.status).toBe('ok');
      // The first transactions request of the resumed run continues that block at that token.
      const first = seen.find((u) => u.includes('/transactions'))!;
      expect(first).toContain(`/blocks/${block}/transactions?`);
      expect(new URL(first, 'http://x').searchParams.get('pageToken')).toBe(inner);
      // Nothing before the cut was fetched again: no request for an earlier block.
      expect(seen.filter((u) => /\/blocks\/(\d+)\/transactions/.test(u)).every((u) => Number(/\/blocks\/(\d+)\//.exec(u)![1]) >= Number(block))).toBe(true);

      const want: string[] = [];
      for (let n = start; n < end; n++) for (const t of sim.world.blockTransactions('43114', n)) want.push(line(t.txHash, n, t.blockIndex, t.value));
      const got = (await rows(lake, 'SELECT tx_hash, block_number, block_index, value_raw FROM block_transactions')).map((r) => line(r.tx_hash, r.block_number, r.block_index, r.value_raw));
      expect(got.length).toBe(want.length);
      expect(sorted(got)).toEqual(sorted(want));
      expect(committed + resumed.streams[0]!.rows).toBe(want.length);
      expect(new StateStore(lake).load('block_transactions', '43114').cursor).toMatchObject({ nextBlock: end });
    } finally {
      await proxy.close();
      await sim.close();
    }
  });
});

describe('configuration of the data-service tables', () => {
  const check = (stream: Record<string, unknown>) => () => checkPipeline({ name: 'x', streams: [stream] }, 'x.yaml');

  it('takes only the page sizes chainlake can send, and says why not 0 for block transactions', () => {
    expect(check({ table: 'block_transactions', chainId: '43114', startBlock: 1, pageSize: 0 })).toThrow(
      /x\.yaml: streams\[0\]\.pageSize: 0 is out of bounds for \/v1\/chains\/\{chainId\}\/blocks\/\{blockId\}\/transactions \(1 to 100\): the service also takes 0, its own default, whose meaning the reference leaves open/,
    );
    expect(check({ table: 'block_transactions', chainId: '43114', startBlock: 1, pageSize: 101 })).toThrow(/pageSize: 101 is out of bounds .*\(1 to 100\)/);
    expect(check({ table: 'blocks', chainId: '43114', startBlock: 1, pageSize: 10 })).toThrow(/streams\[0\]\.pageSize: blocks takes no page size/);
    expect(check({ table: 'erc20_balances', chainId: '43114', addresses: [DEMO.internalAddresses[0]], pageSize: 501 })).toThrow(/\(1 to 500\)/);
    expect(check({ table: 'subnets', network: 'mainnet', pageSize: 10_001 })).toThrow(/\(1 to 10000\)/);
    expect(check({ table: 'subnets', network: 'mainnet', pageSize: 10_000 })()).toMatchObject({ streams: [{ pageSize: 10_000 }] });
  });

  it('names the place of every bad value', () => {
    expect(check({ table: 'blocks', chainId: '43114' })).toThrow(/streams\[0\]\.startBlock: is required for blocks/);
    expect(check({ table: 'blocks', chainId: '43114', startBlock: 10, endBlock: 10 })).toThrow(/streams\[0\]\.endBlock: startBlock 10 must be below endBlock 10/);
    expect(check({ table: 'block_transactions', chainId: 'c-chain', startBlock: 1 })).toThrow(/streams\[0\]\.chainId: "c-chain" is not an EVM chain id/);
    expect(check({ table: 'erc20_balances', chainId: '43114', addresses: [DEMO.internalAddresses[0]], filterSpamTokens: 'yes' })).toThrow(/streams\[0\]\.filterSpamTokens: must be true or false, not "yes"/);
    expect(check({ table: 'erc20_balances', chainId: '43114', addresses: [DEMO.internalAddresses[0]], contractAddresses: ['0x12'] })).toThrow(/streams\[0\]\.contractAddresses\[0\]: "0x12" is not an EVM address/);
    expect(check({ table: 'native_balances', chainId: '43114', addresses: [DEMO.internalAddresses[0]], blockNumber: -1 })).toThrow(/streams\[0\]\.blockNumber: must be at least 0, not -1/);
    expect(check({ table: 'native_balances', chainId: '43114', addresses: [DEMO.internalAddresses[0]], currency: 'btc' })).toThrow(/streams\[0\]\.currency: "btc" is not one of usd, eur/);
    expect(check({ table: 'native_balances', chainId: '43114', addresses: [DEMO.internalAddresses[0]], filterSpamTokens: true })).toThrow(/streams\[0\]\.filterSpamTokens: unknown key for native_balances/);
    expect(check({ table: 'contracts', chainId: '43114', addresses: ['0xnothex'] })).toThrow(/streams\[0\]\.addresses\[0\]: "0xnothex" is not an EVM address/);
    expect(check({ table: 'address_chains', network: 'fuji', addresses: [DEMO.rewardAddresses[0]] })).toThrow(/streams\[0\]\.addresses\[0\]: "P-avax1.*" is not a fuji P-\/X-chain address/);
    expect(check({ table: 'chains', network: 'devnet' })).toThrow(/streams\[0\]\.network: "devnet" is not a network/);
    expect(check({ table: 'chains', feature: 'nft' })).toThrow(/streams\[0\]\.feature: "nft" is not one of nftIndexing, webhooks, teleporter/);
  });

  it('fetches a window whose endBlock is above the head to the head, saying so, and never takes the blocks above as done', async () => {
    const sim = await startSimulator({ seed: 2 });
    try {
      const head = sim.world.headBlock('43114');
      const p = checkPipeline({ name: 'x', sources: { data: { url: sim.url } }, streams: [{ table: 'blocks', chainId: '43114', startBlock: head - 5, endBlock: head + 10 }] }, 'x.yaml');
      const lake = tmp();
      const r = await runPipeline(p, { lake, logger: quiet });
      expect(r.status).toBe('ok');
      expect(r.streams[0]!.notes).toEqual([`43114: endBlock ${head + 10} is above the chain's head (block ${head}): fetched to the head; a later run goes on to endBlock`]);
      expect(await rows(lake, 'SELECT count(*) n, max(block_number) top FROM blocks')).toEqual([{ n: '6', top: String(head) }]);
      const state = new StateStore(lake).load('blocks', '43114');
      expect(state.cursor.nextBlock).toBe(head);
      expect(state.head?.block).toBe(head);
    } finally {
      await sim.close();
    }
  });
});

describe('every metric with every interval it allows', () => {
  it('lands each series of 43114, total, mainnet and testnet exactly as served', async () => {
    const sim = await startSimulator({ seed: 13 });
    try {
      const chainIds = ['43114', 'total', 'mainnet', 'testnet'];
      // 90 days keep it quick and still page the hourly series (2161 points at 2160 a page).
      const startTimestamp = DEMO.now - 90 * 86_400;
      const streams = TIME_INTERVALS.map((timeInterval) => ({
        table: 'chain_metrics', chainIds, timeInterval, startTimestamp,
        metrics: METRICS.filter((m) => timeInterval === 'day' || !dayOnly(m)),
      }));
      const p = checkPipeline({ name: 'metrics', sources: { metrics: { url: sim.url } }, streams }, 'metrics.yaml');
      const lake = tmp();
      const r = await runPipeline(p, { lake, logger: quiet });
      expect(r.status).toBe('ok');
      const want: string[] = [];
      const combos = new Set<string>();
      for (const s of streams)
        for (const chainId of chainIds)
          for (const metric of s.metrics) {
            combos.add(`${metric}/${s.timeInterval}`);
            for (const pt of sim.world.metricPoints(chainId, metric as Metric, { timeInterval: s.timeInterval as TimeInterval, startTimestamp })) want.push(line(chainId, metric, s.timeInterval, pt.timestamp, pt.value));
          }
      // 13 day-only metrics, and 4 metrics with each of the 4 intervals.
      expect(combos.size).toBe(13 + 4 * 4);
      const got = (await rows(lake, `SELECT chain_id, metric, time_interval, epoch(timestamp)::BIGINT ts, value FROM chain_metrics`)).map((x) => line(x.chain_id, x.metric, x.time_interval, x.ts, x.value));
      expect(got.length).toBe(want.length);
      expect(sorted(got)).toEqual(sorted(want));
      const [n] = await rows(lake, `SELECT count(DISTINCT (chain_id, metric, time_interval)) n FROM chain_metrics`);
      expect(Number(n!.n)).toBe(chainIds.length * combos.size);
      expect(r.streams[0]!.pages).toBeGreaterThan(r.streams[0]!.partitions);
    } finally {
      await sim.close();
    }
  });
});

describe('simulator routes of the data-service tables', () => {
  it('serves blocks up to the head only, by number or by a hash it served, and validates parameters', async () => {
    const clock = { t: DEMO.now as number };
    const sim = await startSimulator({ seed: 8, worldNow: () => clock.t });
    const get = async (path: string) => {
      const r = await fetch(sim.url + path);
      return { status: r.status, body: (await r.json()) as any };
    };
    try {
      const head = sim.world.headBlock('43114');
      const latest = await get('/v1/chains/43114/blocks?pageSize=3');
      expect(latest.body.blocks.map((b: any) => Number(b.blockNumber))).toEqual([head, head - 1, head - 2]);
      expect(latest.body.blocks[0]).toEqual(sim.world.block('43114', head));
      expect((await get(`/v1/chains/43114/blocks/${head + 1}`)).status).toBe(404);
      clock.t += 2; // one block later
      expect((await get(`/v1/chains/43114/blocks/${head + 1}`)).body.parentHash).toBe(latest.body.blocks[0].blockHash);
      expect((await get(`/v1/chains/43114/blocks/${latest.body.blocks[1].blockHash}`)).body.blockNumber).toBe(String(head - 1));
      expect((await get(`/v1/chains/43114/blocks/0x${'ab'.repeat(32)}`)).status).toBe(404);
      expect((await get('/v1/chains/43114/blocks/latest')).body.message).toContain('blockId must be a block number or a block hash');
      // pageSize 0, the default, is the whole block; a smaller size pages it.
      const n = head - 7;
      const all = sim.world.blockTransactions('43114', n);
      expect((await get(`/v1/chains/43114/blocks/${n}/transactions`)).body).toEqual({ transactions: all });
      expect((await get(`/v1/chains/43114/blocks/${n}/transactions?pageSize=0`)).body).toEqual({ transactions: all });
      expect((await get(`/v1/chains/43114/blocks/${n}/transactions?pageSize=101`)).status).toBe(400);

      const holder = DEMO.internalAddresses[0];
      const base = `/v1/chains/43114/addresses/${holder}`;
      expect((await get(`${base}/balances:getNative?blockNumber=${head + 99}`)).body.message).toContain('above the latest block');
      expect((await get(`${base}/balances:listErc20?filterSpamTokens=maybe`)).body.message).toContain('filterSpamTokens must be true or false');
      expect((await get(`${base}/balances:listErc20?pageSize=501`)).status).toBe(400);
      expect((await get(`${base}/balances:listErc20?contractAddresses=0x12`)).status).toBe(400);
      const only = await get(`${base}/balances:listErc20?contractAddresses=${DEMO.contracts.erc20}&filterSpamTokens=false&currency=jpy`);
      expect(only.body.erc20TokenBalances.map((b: any) => b.address)).toEqual([DEMO.contracts.erc20]);
      expect(only.body.erc20TokenBalances[0].price.currencyCode).toBe('jpy');
      expect(only.body.nativeTokenBalance.balance).toBe(sim.world.nativeBalance('43114', holder).balance);

      expect((await get('/v1/networks/mainnet/subnets?pageSize=10001')).status).toBe(400);
      expect((await get('/v1/networks/mainnet/addresses:listChainIds')).body.message).toContain('addresses is required');
      expect((await get(`/v1/chains/43114/addresses/0x${'12'.repeat(20)}`)).status).toBe(404);
      expect((await get('/v1/chains?network=fuji')).body.chains.map((c: any) => c.chainId)).toEqual(['43113']);
    } finally {
      await sim.close();
    }
  });
});
