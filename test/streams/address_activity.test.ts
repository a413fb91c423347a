// An address's activity: its native transactions (block-ranged, chunked, appended), its ERC-721 and
// ERC-1155 holdings (snapshots) and the contracts it deployed (a dimension). Pipelines run
// in-process against the simulator; each table is compared row for row with what its world served,
// and every page shape is checked against the official client's response schemas.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ListContractsResponse$inboundSchema, ListErc1155BalancesResponse$inboundSchema, ListErc721BalancesResponse$inboundSchema,
  ListNativeTransactionsResponse$inboundSchema,
} from '@avalanche-sdk/chainkit/models/components';
import { checkPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import type { RunReport } from '../../src/pipeline/report.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { DEMO } from '../../src/simulator/world.js';
import { iterate } from '../../src/simulator/listing.js';
import type { BlockTransaction } from '../../src/simulator/blocks.js';
import { NATIVE_PER_DAY, type Erc1155TokenBalance, type Erc721TokenBalance } from '../../src/simulator/address_activity.js';
import type { ContractMetadata } from '../../src/simulator/catalog.js';
import { erc721Balances } from '../../src/streams/erc721_balances.js';
import { erc1155Balances } from '../../src/streams/erc1155_balances.js';
import { expectCleanRun, lakeRows, line, quiet, sorted } from '../helpers.js';
import { listingPages } from '../official.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'cl-activity-'));
const rows = lakeRows;
const low = (a: string | undefined) => (a === undefined ? null : a.toLowerCase());
const CHAIN = '43114';
const [FACTORY, WALLET] = DEMO.internalAddresses;
/** An address without native transactions: a token contract. */
const QUIET = DEMO.contracts.erc20;

const TX_COLUMNS = `address, tx_hash, block_number, epoch(block_timestamp)::BIGINT ts, block_hash, block_index, tx_status, tx_type,
  from_address, from_name, from_symbol, from_decimals, from_logo_uri, to_address, to_name, to_symbol, to_decimals, to_logo_uri,
  value_raw, gas_limit, gas_used, gas_price_raw, nonce, call_type, method_hash, method_name`;
const txLine = (a: string, t: BlockTransaction) =>
  line(low(a), t.txHash, t.blockNumber, t.blockTimestamp, t.blockHash, t.blockIndex, t.txStatus, t.txType,
    low(t.from.address), t.from.name, t.from.symbol, t.from.decimals, t.from.logoUri, low(t.to.address), t.to.name, t.to.symbol, t.to.decimals, t.to.logoUri,
    t.value, t.gasLimit, t.gasUsed, t.gasPrice, t.nonce, t.method.callType, t.method.methodHash, t.method.methodName);
const rowLine = (r: Record<string, any>) =>
  line(r.address, r.tx_hash, r.block_number, r.ts, r.block_hash, r.block_index, r.tx_status, r.tx_type,
    r.from_address, r.from_name, r.from_symbol, r.from_decimals, r.from_logo_uri, r.to_address, r.to_name, r.to_symbol, r.to_decimals, r.to_logo_uri,
    r.value_raw, r.gas_limit, r.gas_used, r.gas_price_raw, r.nonce, r.call_type, r.method_hash, r.method_name);

const NFT_META = (m: Erc721TokenBalance['metadata']) => [m.indexStatus, m.metadataLastUpdatedTimestamp, m.name, m.symbol, m.imageUri, m.description, m.animationUri, m.externalUrl, m.background];
const NFT_META_SQL = `metadata_index_status, epoch(metadata_updated_at)::BIGINT mts, metadata_name, metadata_symbol, metadata_image_uri, metadata_description, metadata_animation_uri, metadata_external_url, metadata_background`;
const rowMeta = (r: Record<string, any>) => [r.metadata_index_status, r.mts, r.metadata_name, r.metadata_symbol, r.metadata_image_uri, r.metadata_description, r.metadata_animation_uri, r.metadata_external_url, r.metadata_background];
const erc721Line = (holder: string, block: number, b: Erc721TokenBalance) =>
  line(low(holder), block, low(b.address), b.tokenId, b.ercType, b.tokenUri, b.name, b.symbol, low(b.ownerAddress), ...NFT_META(b.metadata), b.metadata.attributes);
const erc1155Line = (holder: string, block: number, b: Erc1155TokenBalance) =>
  line(low(holder), block, low(b.address), b.tokenId, b.ercType, b.tokenUri, b.balance, ...NFT_META(b.metadata), b.metadata.decimals, b.metadata.properties);

const CONTRACT_COLUMNS = 'deployer, address, erc_type, name, symbol, decimals, description, resource_links, tags, deployment_tx_hash, deployer_address, deployer_contract_address';
const contractLine = (deployer: string, m: ContractMetadata) =>
  line(low(deployer), low(m.address), m.ercType, m.name, m.symbol, m.decimals, m.description, m.resourceLinks?.map((l) => `${l.type}:${l.url}`), m.tags, m.deploymentDetails?.txHash, low(m.deploymentDetails?.deployerAddress), low(m.deploymentDetails?.deployerContractAddress));

function pipeline(url: string, streams: Array<Record<string, unknown>>): Pipeline {
  return checkPipeline({ name: 'activity', sources: { data: { url } }, streams }, 'activity.yaml');
}

describe('address activity tables, whole histories', () => {
  let sim: Simulator;
  let lake: string;
  let p: Pipeline;
  let report: RunReport;
  let deployer: string;
  const chain = () => sim.world.chain(CHAIN)!;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 21 });
    lake = tmp();
    deployer = sim.world.contractMetadata(CHAIN, DEMO.contracts.erc721)!.deploymentDetails!.deployerAddress;
    p = pipeline(sim.url, [
      { table: 'address_transactions', chainId: CHAIN, addresses: [FACTORY, WALLET, QUIET] },
      { table: 'erc721_balances', chainId: CHAIN, addresses: [FACTORY, WALLET], pageSize: 2 },
      { table: 'erc1155_balances', chainId: CHAIN, addresses: [FACTORY, WALLET], pageSize: 3 },
      { table: 'contract_deployments', chainId: CHAIN, addresses: [FACTORY, deployer], pageSize: 2 },
    ]);
    report = await runPipeline(p, { lake, logger: quiet, flushRows: 150 });
  });
  afterAll(async () => {
    await sim?.close();
  });
  const stream = (r: RunReport, table: string) => r.streams.find((s) => s.table === table)!;

  it('completes every partition without rejects or unknown fields', () => expectCleanRun(report, { drift: false }));

  it('address_transactions: every transaction of every address as listed, exact amounts, and as its block serves it', async () => {
    const want = [FACTORY, WALLET, QUIET].flatMap((a) => [...iterate(sim.world.activity.listNative(chain(), a, {}, DEMO.now))].map((t) => txLine(a, t)));
    const got = (await rows(lake, `SELECT ${TX_COLUMNS} FROM address_transactions`)).map(rowLine);
    expect(got.length).toBeGreaterThan(500);
    expect(got.length).toBe(want.length);
    expect(sorted(got)).toEqual(sorted(want));
    // Each is a transaction of its block, at its index, field for field.
    const some = await rows(lake, `SELECT block_number, block_index, tx_hash, from_address, to_address, value_raw FROM address_transactions USING SAMPLE 25 ROWS`);
    for (const r of some) {
      const t = sim.world.blockTransactions(CHAIN, Number(r.block_number))[r.block_index]!;
      expect(line(t.txHash, low(t.from.address), low(t.to.address), t.value)).toBe(line(r.tx_hash, r.from_address, r.to_address, r.value_raw));
    }
    const [check] = await rows(lake, `SELECT
        count(*) FILTER (WHERE length(value_raw) > 38 AND value::VARCHAR = ltrim(value_raw, '0')) over38,
        count(*) FILTER (WHERE length(value_raw) <= 38 AND value::VARCHAR <> value_raw) mismatched,
        count(*) FILTER (WHERE gas_price::VARCHAR <> gas_price_raw) gas_mismatched,
        count(*) - count(DISTINCT (chain_id, address, tx_hash)) dup_keys,
        count(DISTINCT call_type) call_types, count(DISTINCT tx_status) statuses,
        count(*) FILTER (WHERE from_address = address) sent, count(*) FILTER (WHERE to_address = address) received,
        count(*) FILTER (WHERE address = '${low(QUIET)}') quiet
      FROM address_transactions`);
    expect(Number(check!.over38)).toBeGreaterThan(0);
    expect(check).toMatchObject({ mismatched: '0', gas_mismatched: '0', dup_keys: '0', call_types: '3', statuses: '2', quiet: '0' });
    expect(Number(check!.sent) + Number(check!.received)).toBe(got.length);
    expect(Number(check!.sent)).toBeGreaterThan(0);
    expect(Number(check!.received)).toBeGreaterThan(0);
    // Fetched as block ranges at once below one pinned head.
    expect(stream(report, 'address_transactions').chunks).toBeGreaterThan(2);
  });

  it('erc721_balances: every token of every holder at the pinned head, with its metadata', async () => {
    const head = sim.world.headBlock(CHAIN);
    const want = [FACTORY, WALLET].flatMap((a) => sim.world.activity.erc721(chain(), a, head).map((b) => erc721Line(a, head, b)));
    const got = (await rows(lake, `SELECT address, block_number, token_address, token_id, erc_type, token_uri, token_name, token_symbol, owner_address, ${NFT_META_SQL}, metadata_attributes FROM erc721_balances`)).map((r) =>
      line(r.address, r.block_number, r.token_address, r.token_id, r.erc_type, r.token_uri, r.token_name, r.token_symbol, r.owner_address, ...rowMeta(r), r.metadata_attributes),
    );
    expect(got.length).toBeGreaterThan(4);
    expect(sorted(got)).toEqual(sorted(want));
    const [check] = await rows(lake, `SELECT count(*) FILTER (WHERE length(token_id) > 38) big_ids, count(*) FILTER (WHERE owner_address IS NULL) no_owner, count(DISTINCT metadata_index_status) statuses FROM erc721_balances`);
    expect(Number(check!.big_ids)).toBeGreaterThan(0);
    expect(Number(check!.no_owner)).toBeGreaterThan(0);
  });

  it('erc1155_balances: every balance of every holder at the pinned head, exact', async () => {
    const head = sim.world.headBlock(CHAIN);
    const want = [FACTORY, WALLET].flatMap((a) => sim.world.activity.erc1155(chain(), a, head).map((b) => erc1155Line(a, head, b)));
    const got = (await rows(lake, `SELECT address, block_number, token_address, token_id, erc_type, token_uri, balance_raw, ${NFT_META_SQL}, metadata_decimals, metadata_properties FROM erc1155_balances`)).map((r) =>
      line(r.address, r.block_number, r.token_address, r.token_id, r.erc_type, r.token_uri, r.balance_raw, ...rowMeta(r), r.metadata_decimals, r.metadata_properties),
    );
    expect(got.length).toBeGreaterThan(4);
    expect(sorted(got)).toEqual(sorted(want));
    const [check] = await rows(lake, `SELECT count(*) FILTER (WHERE length(balance_raw) > 38 AND balance::VARCHAR = ltrim(balance_raw, '0')) over38, count(*) FILTER (WHERE length(balance_raw) <= 38 AND balance::VARCHAR <> balance_raw) mismatched, typeof(any_value(balance)) t FROM erc1155_balances`);
    expect(Number(check!.over38)).toBeGreaterThan(0);
    expect(check).toMatchObject({ mismatched: '0', t: 'BIGNUM' });
  });

  it('contract_deployments: what each deployer deployed, as sender or as deploying contract', async () => {
    const want = [FACTORY, deployer].flatMap((d) => sim.world.activity.deployments(sim.world.catalog, chain(), d).map((m) => contractLine(d, m)));
    const got = (await rows(lake, `SELECT ${CONTRACT_COLUMNS} FROM contract_deployments`)).map((r) =>
      line(r.deployer, r.address, r.erc_type, r.name, r.symbol, r.decimals, r.description, r.resource_links, r.tags, r.deployment_tx_hash, r.deployer_address, r.deployer_contract_address),
    );
    expect(want.filter((w) => w.startsWith(low(FACTORY)!)).length).toBeGreaterThan(0);
    expect(want.filter((w) => w.startsWith(low(deployer)!)).length).toBeGreaterThan(0);
    expect(sorted(got)).toEqual(sorted(want));
  });

  it('a rerun on the same head adds no transaction and replaces each snapshot and dimension row in place', async () => {
    const count = () => rows(lake, ['address_transactions', 'erc721_balances', 'erc1155_balances', 'contract_deployments'].map((t) => `SELECT '${t}' t, count(*) n FROM ${t}`).join(' UNION ALL ') + ' ORDER BY t');
    const before = await count();
    const second = await runPipeline(p, { lake, logger: quiet });
    expect(second.status).toBe('ok');
    expect(stream(second, 'address_transactions').rows).toBe(0);
    expect(await count()).toEqual(before);
  });
});

describe('address activity on a moving head', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (closers.length) await closers.pop()!();
  });

  it('appends a day of new transactions (and no old one) and adds an NFT snapshot at the new head', async () => {
    const clock = { t: DEMO.now as number };
    const sim = await startSimulator({ seed: 4, worldNow: () => clock.t });
    closers.push(() => sim.close());
    const chain = sim.world.chain(CHAIN)!;
    const start = sim.world.headBlock(CHAIN) - 2_000_000;
    const p = pipeline(sim.url, [
      { table: 'address_transactions', chainId: CHAIN, addresses: [FACTORY, WALLET], startBlock: start, pageSize: 7 },
      { table: 'erc721_balances', chainId: CHAIN, addresses: [WALLET] },
      { table: 'erc1155_balances', chainId: CHAIN, addresses: [WALLET], contractAddresses: [DEMO.contracts.erc1155] },
    ]);
    const lake = tmp();
    const first = await runPipeline(p, { lake, logger: quiet, flushRows: 20 });
    expect(first.status).toBe('ok');
    const firstHead = sim.world.headBlock(CHAIN);
    clock.t += 86_400;
    const second = await runPipeline(p, { lake, logger: quiet, flushRows: 20 });
    expect(second.status).toBe('ok');
    const head = sim.world.headBlock(CHAIN);
    // Exactly a day's worth for each address, all above the first head.
    expect(second.streams.find((s) => s.table === 'address_transactions')!.rows).toBe(2 * NATIVE_PER_DAY);
    const [above] = await rows(lake, `SELECT count(*) n FROM address_transactions WHERE block_number > ${firstHead}`);
    expect(Number(above!.n)).toBe(2 * NATIVE_PER_DAY);
    const want = [FACTORY, WALLET].flatMap((a) => [...iterate(sim.world.activity.listNative(chain, a, { startBlock: start }, clock.t))].map((t) => txLine(a, t)));
    const got = (await rows(lake, `SELECT ${TX_COLUMNS} FROM address_transactions`)).map(rowLine);
    expect(got.length).toBe(want.length);
    expect(sorted(got)).toEqual(sorted(want));

    // Two snapshots, one per head, each as the world had it at that block.
    const nft = (await rows(lake, `SELECT block_number, token_address, token_id FROM erc721_balances`)).map((r) => line(r.block_number, r.token_address, r.token_id));
    const wantNft = [firstHead, head].flatMap((b) => sim.world.activity.erc721(chain, WALLET, b).map((x) => line(b, low(x.address), x.tokenId)));
    expect(sorted(nft)).toEqual(sorted(wantNft));
    const items = (await rows(lake, `SELECT block_number, token_address, token_id, balance_raw FROM erc1155_balances`)).map((r) => line(r.block_number, r.token_address, r.token_id, r.balance_raw));
    const wantItems = [firstHead, head].flatMap((b) => sim.world.activity.erc1155(chain, WALLET, b, DEMO.contracts.erc1155).map((x) => line(b, low(x.address), x.tokenId, x.balance)));
    expect(wantItems.length).toBeGreaterThan(0);
    expect(sorted(items)).toEqual(sorted(wantItems));
  });
});

describe('simulator routes of address activity', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 21 });
  });
  afterAll(async () => {
    await sim?.close();
  });
  const get = async (path: string) => {
    const r = await fetch(sim.url + path);
    return { status: r.status, body: (await r.json()) as any };
  };
  /** Every page of a listing. */
  const pages = (path: string) => listingPages(sim.url, path);
  function parses(schema: { safeParse(v: unknown): { success: boolean; error?: { issues: unknown } } }, body: unknown): void {
    const r = schema.safeParse(body);
    expect(r.success, String(JSON.stringify(r.error?.issues)).slice(0, 2000)).toBe(true);
  }

  it("answers in the official client's shapes, every variant of item included", async () => {
    const native = await pages(`/v1/chains/${CHAIN}/addresses/${FACTORY}/transactions:listNative?pageSize=100`);
    for (const b of native) parses(ListNativeTransactionsResponse$inboundSchema, b);
    const txs = native.flatMap((b) => b.transactions);
    expect(new Set(txs.map((t: any) => t.method.callType))).toEqual(new Set(['NATIVE_TRANSFER', 'CONTRACT_CALL', 'CONTRACT_CREATION']));
    expect(txs.some((t: any) => t.method.methodName === undefined)).toBe(true);

    const holders = [FACTORY, WALLET, DEMO.internalAddresses[0]];
    const e721 = (await Promise.all(holders.map((h) => pages(`/v1/chains/${CHAIN}/addresses/${h}/balances:listErc721?pageSize=2`)))).flat();
    for (const b of e721) parses(ListErc721BalancesResponse$inboundSchema, b);
    const tokens = e721.flatMap((b) => b.erc721TokenBalances);
    expect(tokens.some((t: any) => t.ownerAddress) && tokens.some((t: any) => !t.ownerAddress)).toBe(true);
    const e1155 = (await Promise.all(holders.map((h) => pages(`/v1/chains/${CHAIN}/addresses/${h}/balances:listErc1155?pageSize=2`)))).flat();
    for (const b of e1155) parses(ListErc1155BalancesResponse$inboundSchema, b);
    // Metadata of every index status the world serves, indexed and not.
    const statuses = new Set([...tokens, ...e1155.flatMap((b) => b.erc1155TokenBalances)].map((t: any) => t.metadata.indexStatus));
    expect(statuses.has('INDEXED') && statuses.size > 1).toBe(true);

    const deployer = sim.world.contractMetadata(CHAIN, DEMO.contracts.erc721)!.deploymentDetails!.deployerAddress;
    const deps = (await Promise.all([FACTORY, deployer].map((d) => pages(`/v1/chains/${CHAIN}/contracts/${d}/deployments?pageSize=1`)))).flat();
    for (const b of deps) parses(ListContractsResponse$inboundSchema, b);
  });

  it('honours the block range, the contract filter and the block, and names every bad parameter', async () => {
    const all = (await pages(`/v1/chains/${CHAIN}/addresses/${WALLET}/transactions:listNative?pageSize=100`)).flatMap((b) => b.transactions);
    const blocks = all.map((t: any) => Number(t.blockNumber));
    expect(blocks).toEqual([...blocks].sort((a, b) => b - a));
    const [lo, hi] = [blocks[40]!, blocks[10]!];
    const ranged = (await pages(`/v1/chains/${CHAIN}/addresses/${WALLET}/transactions:listNative?startBlock=${lo}&endBlock=${hi}&pageSize=7`)).flatMap((b) => b.transactions);
    expect(ranged).toEqual(all.filter((t: any) => Number(t.blockNumber) >= lo && Number(t.blockNumber) < hi));
    // By blockchain id too; an address without transactions gets an empty list.
    expect((await get(`/v1/chains/${sim.world.chain(CHAIN)!.blockchainId}/addresses/${WALLET}/transactions:listNative?pageSize=3`)).body.transactions).toEqual(all.slice(0, 3));
    expect((await get(`/v1/chains/${CHAIN}/addresses/${QUIET}/transactions:listNative`)).body).toEqual({ transactions: [] });

    const only = (await get(`/v1/chains/${CHAIN}/addresses/${WALLET}/balances:listErc1155?contractAddress=${DEMO.contracts.erc1155}&pageSize=500`)).body;
    expect(only.erc1155TokenBalances.every((b: any) => b.address === DEMO.contracts.erc1155)).toBe(true);
    const old = sim.world.headBlock(CHAIN) - 100_000;
    const past = (await get(`/v1/chains/${CHAIN}/addresses/${WALLET}/balances:listErc1155?blockNumber=${old}&pageSize=500`)).body;
    expect(past.erc1155TokenBalances).toEqual(sim.world.activity.erc1155(sim.world.chain(CHAIN)!, WALLET, old));
    expect(past.nativeTokenBalance).toEqual(sim.world.nativeBalance(CHAIN, WALLET, old));

    const base = `/v1/chains/${CHAIN}/addresses/${WALLET}`;
    const bad: Array<[string, string]> = [
      [`${base}/transactions:listNative?pageSize=101`, 'pageSize must not be greater than 100'],
      [`${base}/transactions:listNative?pageSize=0`, 'pageSize must not be less than 1'],
      [`${base}/transactions:listNative?startBlock=x`, 'startBlock must be an integer'],
      [`${base}/transactions:listNative?startBlock=9&endBlock=9`, 'startBlock must be less than endBlock'],
      [`${base}/transactions:listNative?pageToken=nope`, 'pageToken is invalid'],
      [`/v1/chains/${CHAIN}/addresses/0x12/transactions:listNative`, 'address must be 0x followed by 40 hex digits'],
      [`/v1/chains/c-chain/addresses/${WALLET}/transactions:listNative`, 'chainId must be an EVM chain id'],
      [`${base}/balances:listErc721?pageSize=501`, 'pageSize must not be greater than 500'],
      [`${base}/balances:listErc721?contractAddress=0x12`, 'contractAddress must be 0x followed by 40 hex digits'],
      [`${base}/balances:listErc1155?blockNumber=${sim.world.headBlock(CHAIN) + 5}`, 'blockNumber'],
      [`${base}/balances:listErc1155?blockNumber=latest`, 'blockNumber must be a block number'],
      [`/v1/chains/${CHAIN}/contracts/0xzz/deployments`, 'address must be 0x followed by 40 hex digits'],
      [`/v1/chains/${CHAIN}/contracts/${WALLET}/deployments?pageSize=101`, 'pageSize must not be greater than 100'],
    ];
    for (const [path, message] of bad) {
      const r = await get(path);
      expect(r.status, path).toBe(400);
      expect(r.body.message, path).toContain(message);
    }
    expect((await get(`/v1/chains/99999/addresses/${WALLET}/transactions:listNative`)).status).toBe(404);
  });
});

describe('configuration of the address activity tables', () => {
  const check = (stream: Record<string, unknown>) => () => checkPipeline({ name: 'x', streams: [stream] }, 'x.yaml');

  it('names the place of every bad value', () => {
    expect(check({ table: 'address_transactions', chainId: CHAIN })).toThrow(/streams\[0\]\.addresses: is required for address_transactions/);
    expect(check({ table: 'address_transactions', chainId: CHAIN, addresses: ['0x12'] })).toThrow(/streams\[0\]\.addresses\[0\]: "0x12" is not an EVM address/);
    expect(check({ table: 'address_transactions', chainId: CHAIN, addresses: [WALLET], startBlock: 10, endBlock: 10 })).toThrow(/streams\[0\]\.endBlock: startBlock 10 must be below endBlock 10/);
    expect(check({ table: 'address_transactions', chainId: CHAIN, addresses: [WALLET], pageSize: 101 })).toThrow(/pageSize: 101 is out of bounds .*\(1 to 100\)/);
    expect(check({ table: 'address_transactions', chainId: CHAIN, addresses: [WALLET], chunks: 0 })).toThrow(/streams\[0\]\.chunks: must be at least 1/);
    expect(check({ table: 'erc721_balances', chainId: CHAIN, addresses: [WALLET], blockNumber: 5 })).toThrow(/streams\[0\]\.blockNumber: unknown key for erc721_balances/);
    expect(check({ table: 'erc721_balances', chainId: CHAIN, addresses: [WALLET], contractAddresses: ['0xnothex'] })).toThrow(/streams\[0\]\.contractAddresses\[0\]: "0xnothex" is not an EVM address/);
    expect(check({ table: 'erc1155_balances', chainId: CHAIN, addresses: [WALLET], blockNumber: -1 })).toThrow(/streams\[0\]\.blockNumber: must be at least 0, not -1/);
    expect(check({ table: 'erc1155_balances', chainId: CHAIN, addresses: [WALLET], pageSize: 501 })).toThrow(/\(1 to 500\)/);
    expect(check({ table: 'contract_deployments', chainId: 'c-chain', addresses: [WALLET] })).toThrow(/streams\[0\]\.chainId: "c-chain" is not an EVM chain id/);
  });

  it('makes a partition per holder, or per holder and contract when contracts are named, each asking for its one contract', () => {
    const p = checkPipeline({ name: 'x', streams: [{ table: 'erc721_balances', chainId: CHAIN, addresses: [FACTORY, WALLET], contractAddresses: [DEMO.contracts.erc721, DEMO.contracts.erc1155] }] }, 'x.yaml');
    const parts = erc721Balances.partitions(p.streams[0]!);
    expect(parts.map((x) => [x.id, x.query.contractAddress])).toEqual(
      [FACTORY, WALLET].flatMap((a) => [DEMO.contracts.erc721, DEMO.contracts.erc1155].map((c) => [`${CHAIN}/${low(a)}/${low(c)}`, low(c)])),
    );
    const whole = checkPipeline({ name: 'x', streams: [{ table: 'erc1155_balances', chainId: CHAIN, addresses: [WALLET] }] }, 'x.yaml');
    expect(erc1155Balances.partitions(whole.streams[0]!)).toEqual([{ id: `${CHAIN}/${low(WALLET)}`, path: { chainId: CHAIN, address: low(WALLET) }, query: {}, values: { chainId: CHAIN, address: low(WALLET) } }]);
  });
});
