// An address's full transaction listing (GET .../addresses/{address}/transactions), whose nested
// transfers and internal transactions land as address_tx_transfers and
// address_tx_internals (block-ranged, chunked), and its collectibles
// (balances:listCollectibles) as the snapshot table collectible_balances. Pipelines run in-process
// against the simulator; each table is compared row for row with what its world served and with
// the table of the narrower listings of the same items, and every page shape is checked against
// the official client's response schemas.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { rebuildTable } from '../../src/pipeline/rebuild.js';
import type { RunReport } from '../../src/pipeline/report.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { DEMO, type World } from '../../src/simulator/world.js';
import { iterate } from '../../src/simulator/listing.js';
import { namedAddress, type BlockRange, type ErcType } from '../../src/simulator/evm.js';
import { addressTransfers } from '../../src/simulator/address_transfers.js';
import { AddressDetails } from '../../src/simulator/address_details.js';
import { addressTxTransfers } from '../../src/streams/address_tx_transfers.js';
import { collectibleBalances } from '../../src/streams/collectible_balances.js';
import { expectCleanRun, lakeRows as rows, line, quiet, sorted } from '../helpers.js';
import { listingPages } from '../official.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'cl-addrfull-'));
const low = (a: string | undefined) => (a === undefined ? null : a.toLowerCase());
const CHAIN = '43114';
const TYPES: ErcType[] = ['ERC-20', 'ERC-721', 'ERC-1155'];
/** A named contract: a party to many token transfers. */
const ROUTER = namedAddress(CHAIN, 0);
/** Internal-transaction owners: native transactions, internal calls and token transfers (one world). */
const [FACTORY, WALLET] = DEMO.internalAddresses as [string, string];

/** A plain wallet of the world: the receiver of the newest ERC-20 transfer that went to one. */
function walletOf(w: World): string {
  for (const t of w.transfers(CHAIN, DEMO.contracts.erc20)) {
    if (t.to.name === undefined && !/^0x0{40}$/.test(t.to.address)) return t.to.address;
  }
  throw new Error('no wallet');
}

function pipeline(url: string, streams: Array<Record<string, unknown>>): Pipeline {
  return checkPipeline({ name: 'addrfull', sources: { data: { url } }, streams }, 'addrfull.yaml');
}
const stream = (r: RunReport, table: string) => r.streams.find((s) => s.table === table)!;

/** Rows of `a` not in `b` and of `b` not in `a` (as multisets) over the columns both share. */
async function difference(lake: string, a: string, b: string, columns: string, where = 'true'): Promise<number> {
  const [r] = await rows(lake, `SELECT
    (SELECT count(*) FROM (SELECT ${columns} FROM ${a} WHERE ${where} EXCEPT ALL SELECT ${columns} FROM ${b} WHERE ${where})) +
    (SELECT count(*) FROM (SELECT ${columns} FROM ${b} WHERE ${where} EXCEPT ALL SELECT ${columns} FROM ${a} WHERE ${where})) n`);
  return Number(r!.n);
}

const TRANSFER_COLUMNS = `chain_id, address, block_number, block_timestamp, block_hash, tx_hash, log_index, from_address, from_name, from_symbol,
  from_decimals, from_logo_uri, to_address, to_name, to_symbol, to_decimals, to_logo_uri, value, value_raw, token_address, token_type, token_id,
  token_name, token_symbol, token_decimals, token_logo_uri, token_uri, token_metadata::VARCHAR, token_price_currency, token_price`;
const INTERNAL_COLUMNS = `chain_id, address, internal_tx_id, block_number, block_timestamp, block_hash, tx_hash, from_address, from_name, from_symbol,
  from_decimals, from_logo_uri, to_address, to_name, to_symbol, to_decimals, to_logo_uri, internal_tx_type, value, value_raw, is_reverted, gas_used, gas_limit`;
const NFT_COLUMNS = `chain_id, address, block_number, block_timestamp, token_address, token_id, erc_type, token_uri, metadata_index_status, metadata_updated_at,
  metadata_name, metadata_symbol, metadata_image_uri, metadata_description, metadata_animation_uri, metadata_external_url, metadata_background`;

/** The world's transfers of the addresses (every token type), each as (address, tx, log, token, id, amount). */
function servedTransfers(w: World, addresses: string[], range: BlockRange = {}, at = DEMO.now as number): string[] {
  const chain = w.chain(CHAIN)!;
  return addresses.flatMap((a) => TYPES.flatMap((t) => [...iterate(addressTransfers(w).list(chain, t, a, range, at))].map((x) => {
    const tok = 'erc20Token' in x ? x.erc20Token : 'erc721Token' in x ? x.erc721Token : x.erc1155Token;
    return line(low(a), x.txHash, x.blockNumber, x.logIndex, low(tok.address), tok.ercType, 'tokenId' in tok ? tok.tokenId : undefined, 'value' in x ? x.value : undefined);
  })));
}
const transferRow = (r: Record<string, any>) => line(r.address, r.tx_hash, r.block_number, r.log_index, r.token_address, r.token_type, r.token_id, r.value_raw);

describe('the full transaction listing and collectibles, whole histories', () => {
  let sim: Simulator;
  let lake: string;
  let p: Pipeline;
  let report: RunReport;
  let wallet: string;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 21 });
    wallet = walletOf(sim.world);
    lake = tmp();
    const everyone = [ROUTER, wallet, FACTORY, WALLET];
    p = pipeline(sim.url, [
      { table: 'address_tx_transfers', chainId: CHAIN, addresses: everyone, pageSize: 20 },
      { table: 'address_tx_internals', chainId: CHAIN, addresses: everyone },
      { table: 'address_token_transfers', chainId: CHAIN, addresses: everyone },
      { table: 'internal_transactions', chainId: CHAIN, addresses: [FACTORY, WALLET] },
      { table: 'collectible_balances', chainId: CHAIN, addresses: [FACTORY, WALLET, wallet], pageSize: 3 },
      { table: 'erc721_balances', chainId: CHAIN, addresses: [FACTORY, WALLET, wallet] },
      { table: 'erc1155_balances', chainId: CHAIN, addresses: [FACTORY, WALLET, wallet] },
    ]);
    report = await runPipeline(p, { lake, logger: quiet, flushRows: 150 });
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('completes every partition without rejects or unknown fields', () => expectCleanRun(report, { drift: false }));

  it('address_tx_transfers: every transfer of every address as the world served it, amounts exact', async () => {
    const want = servedTransfers(sim.world, [ROUTER, wallet, FACTORY, WALLET]);
    const got = (await rows(lake, `SELECT * FROM address_tx_transfers`)).map(transferRow);
    expect(got.length).toBeGreaterThan(300);
    expect(sorted(got)).toEqual(sorted(want));
    const [check] = await rows(lake, `SELECT
        count(*) FILTER (WHERE length(value_raw) > 38 AND value::VARCHAR = ltrim(value_raw, '0')) over38,
        count(*) FILTER (WHERE length(value_raw) <= 38 AND value::VARCHAR <> value_raw) mismatched,
        count(*) FILTER (WHERE token_type = 'ERC-721' AND value_raw IS NOT NULL) nft_values,
        count(*) FILTER (WHERE length(token_id) > 38) big_ids,
        count(*) - count(DISTINCT (chain_id, address, token_address, tx_hash, log_index, token_id)) dup_keys,
        count(*) FILTER (WHERE address NOT IN (from_address, to_address)) strangers,
        count(DISTINCT token_type) n_types, count(DISTINCT address) addresses,
        typeof(any_value(value)) value_type, typeof(any_value(block_timestamp)) ts_type
      FROM address_tx_transfers`);
    expect(Number(check!.over38)).toBeGreaterThan(0);
    expect(Number(check!.big_ids)).toBeGreaterThan(0);
    expect(check).toMatchObject({
      mismatched: '0', nft_values: '0', dup_keys: '0', strangers: '0', n_types: '3', addresses: '4',
      value_type: 'BIGNUM', ts_type: 'TIMESTAMP WITH TIME ZONE',
    });
  });

  it("holds address_token_transfers' very rows, every column, from one listing per address", async () => {
    expect(await difference(lake, 'address_tx_transfers', 'address_token_transfers', TRANSFER_COLUMNS)).toBe(0);
    const [n] = await rows(lake, 'SELECT count(*) n FROM address_token_transfers');
    expect(Number(n!.n)).toBeGreaterThan(300);
    expect(stream(report, 'address_tx_transfers').partitions).toBe(4);
  });

  it("address_tx_internals: internal_transactions' very rows, the derived ids included", async () => {
    expect(await difference(lake, 'address_tx_internals', 'internal_transactions', INTERNAL_COLUMNS)).toBe(0);
    const want = [FACTORY, WALLET].reduce((n, a) => n + sim.world.listInternals(CHAIN, a).length, 0);
    const [check] = await rows(lake, `SELECT count(*) n, count(DISTINCT internal_tx_id) ids,
        count(*) FILTER (WHERE length(value_raw) > 38 AND value::VARCHAR = ltrim(value_raw, '0')) over38,
        count(*) FILTER (WHERE length(value_raw) <= 38 AND value::VARCHAR <> value_raw) mismatched,
        count(DISTINCT internal_tx_type) n_types
      FROM address_tx_internals`);
    expect(Number(check!.n)).toBe(want);
    expect(check!.ids).toBe(check!.n);
    expect(Number(check!.over38)).toBeGreaterThan(0);
    expect(check).toMatchObject({ mismatched: '0', n_types: '8' });
  });

  it('collectible_balances: the ERC-721 and ERC-1155 snapshots of the same holders at the same head, in one table', async () => {
    const head = sim.world.headBlock(CHAIN);
    const chain = sim.world.chain(CHAIN)!;
    const want = [FACTORY, WALLET, wallet].flatMap((a) => [
      ...sim.world.activity.erc721(chain, a, head).map((b) => line(low(a), head, low(b.address), b.tokenId, b.ercType, undefined, b.name, low(b.ownerAddress), b.metadata.attributes, undefined)),
      ...sim.world.activity.erc1155(chain, a, head).map((b) => line(low(a), head, low(b.address), b.tokenId, b.ercType, b.balance, undefined, undefined, undefined, b.metadata.properties)),
    ]);
    const got = (await rows(lake, `SELECT address, block_number, token_address, token_id, erc_type, balance_raw, token_name, owner_address, metadata_attributes, metadata_properties FROM collectible_balances`))
      .map((r) => line(r.address, r.block_number, r.token_address, r.token_id, r.erc_type, r.balance_raw, r.token_name, r.owner_address, r.metadata_attributes, r.metadata_properties));
    expect(got.length).toBeGreaterThan(10);
    expect(sorted(got)).toEqual(sorted(want));
    const both = `(SELECT ${NFT_COLUMNS}, NULL::VARCHAR balance_raw, owner_address FROM erc721_balances UNION ALL SELECT ${NFT_COLUMNS}, balance_raw, NULL FROM erc1155_balances)`;
    expect(await difference(lake, 'collectible_balances', both, `${NFT_COLUMNS}, balance_raw, owner_address`)).toBe(0);
    const [check] = await rows(lake, `SELECT count(*) FILTER (WHERE length(balance_raw) > 38 AND balance::VARCHAR = ltrim(balance_raw, '0')) over38,
        count(*) FILTER (WHERE length(balance_raw) <= 38 AND balance::VARCHAR <> balance_raw) mismatched,
        count(*) FILTER (WHERE erc_type = 'ERC-721' AND balance_raw IS NOT NULL) nft_amounts, typeof(any_value(balance)) t
      FROM collectible_balances`);
    expect(Number(check!.over38)).toBeGreaterThan(0);
    expect(check).toMatchObject({ mismatched: '0', nft_amounts: '0', t: 'BIGNUM' });
  });

  it('a rerun on the same head adds no transfer or call and replaces the snapshot in place', async () => {
    const tables = ['address_tx_transfers', 'address_tx_internals', 'collectible_balances'];
    const count = () => rows(lake, tables.map((t) => `SELECT '${t}' t, count(*) n FROM ${t}`).join(' UNION ALL ') + ' ORDER BY t');
    const before = await count();
    const second = await runPipeline(p, { lake, logger: quiet });
    expect(second.status).toBe('ok');
    expect(stream(second, 'address_tx_transfers').rows).toBe(0);
    expect(stream(second, 'address_tx_internals').rows).toBe(0);
    expect(await count()).toEqual(before);
  });
});

describe('the full transaction listing rebuilt from its raw pages', () => {
  it('gives back the same transfers and calls, the derived ids included', async () => {
    const sim = await startSimulator({ seed: 21 });
    try {
      const lake = tmp();
      const p = pipeline(sim.url, [
        { table: 'address_tx_transfers', chainId: CHAIN, addresses: [ROUTER], pageSize: 30 },
        { table: 'address_tx_internals', chainId: CHAIN, addresses: [FACTORY], pageSize: 30 },
      ]);
      expect((await runPipeline(p, { lake, logger: quiet, flushRows: 50 })).status).toBe('ok');
      for (const [table, columns] of [['address_tx_transfers', TRANSFER_COLUMNS], ['address_tx_internals', INTERNAL_COLUMNS]] as const) {
        const before = (await rows(lake, `SELECT ${columns} FROM ${table}`)).map((r) => line(...Object.values(r)));
        expect(before.length, table).toBeGreaterThan(50);
        const r = await rebuildTable(lake, table, { logger: quiet });
        expect(r.rejects, table).toBe(0);
        expect(sorted((await rows(lake, `SELECT ${columns} FROM ${table}`)).map((x) => line(...Object.values(x)))), table).toEqual(sorted(before));
      }
    } finally {
      await sim.close();
    }
  });
});

describe('the full transaction listing in block ranges', () => {
  it('splits a listing under way into ranges fetched at once, and lands the same rows as one listing page after page', async () => {
    const sim = await startSimulator({ seed: 21 });
    try {
      const run = async (chunks: number) => {
        const lake = tmp();
        const r = await runPipeline(pipeline(sim.url, [{ table: 'address_tx_transfers', chainId: CHAIN, addresses: [ROUTER], pageSize: 10, chunks }]), { lake, logger: quiet, flushRows: 40 });
        expect(r.status).toBe('ok');
        return { r, got: (await rows(lake, 'SELECT * FROM address_tx_transfers')).map(transferRow) };
      };
      const chunked = await run(16);
      const one = await run(1);
      expect(stream(chunked.r, 'address_tx_transfers').splits).toBeGreaterThan(0);
      expect(stream(one.r, 'address_tx_transfers').chunks).toBe(1);
      expect(sorted(chunked.got)).toEqual(sorted(servedTransfers(sim.world, [ROUTER])));
      expect(sorted(one.got)).toEqual(sorted(chunked.got));
    } finally {
      await sim.close();
    }
  });
});

describe('the full transaction listing on a moving head', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (closers.length) await closers.pop()!();
  });

  it("appends a day's new transfers and calls (and no old one), small pages, one range at a time", async () => {
    const clock = { t: DEMO.now as number };
    const sim = await startSimulator({ seed: 4, worldNow: () => clock.t });
    closers.push(() => sim.close());
    const wallet = walletOf(sim.world);
    const start = sim.world.headBlock(CHAIN) - 3_000_000;
    const p = pipeline(sim.url, [
      { table: 'address_tx_transfers', chainId: CHAIN, addresses: [ROUTER, wallet], startBlock: start, pageSize: 7, chunks: 1 },
      { table: 'address_tx_internals', chainId: CHAIN, addresses: [FACTORY], startBlock: start, pageSize: 9 },
    ]);
    const lake = tmp();
    const first = await runPipeline(p, { lake, logger: quiet, flushRows: 20 });
    expect(first.status).toBe('ok');
    const firstHead = sim.world.headBlock(CHAIN);
    clock.t += 2 * 86_400;
    const second = await runPipeline(p, { lake, logger: quiet, flushRows: 20 });
    expect(second.status).toBe('ok');
    const fresh = servedTransfers(sim.world, [ROUTER, wallet], { startBlock: firstHead + 1 }, clock.t);
    expect(fresh.length).toBeGreaterThan(0);
    expect(stream(second, 'address_tx_transfers').rows).toBe(fresh.length);
    const got = (await rows(lake, `SELECT * FROM address_tx_transfers`)).map(transferRow);
    expect(sorted(got)).toEqual(sorted(servedTransfers(sim.world, [ROUTER, wallet], { startBlock: start }, clock.t)));
    const calls = sim.world.asOf(clock.t).listInternals(CHAIN, FACTORY, { startBlock: start });
    const newCalls = sim.world.asOf(clock.t).listInternals(CHAIN, FACTORY, { startBlock: firstHead + 1 });
    expect(newCalls.length).toBeGreaterThan(0);
    expect(stream(second, 'address_tx_internals').rows).toBe(newCalls.length);
    const [n] = await rows(lake, 'SELECT count(*) n FROM address_tx_internals');
    expect(Number(n!.n)).toBe(calls.length);
  });
});

describe('simulator routes of the full transaction listing and collectibles', () => {
  let sim: Simulator;
  let wallet: string;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 21 });
    wallet = walletOf(sim.world);
  });
  afterAll(async () => {
    await sim?.close();
  });
  const get = async (path: string) => {
    const r = await fetch(sim.url + path);
    return { status: r.status, body: (await r.json()) as any };
  };
  const pages = async (path: string, route: string, field: string) => (await listingPages(sim.url, path, route)).flatMap((b) => b[field]);
  const txs = (a: string, query = 'pageSize=100') => pages(`/v1/chains/${CHAIN}/addresses/${a}/transactions?${query}`, 'transactionDetails', 'transactions');
  const strip = ({ blockNumber: _n, blockTimestamp: _t, blockHash: _h, txHash: _x, ...rest }: any) => rest;

  it("answers in the official client's shapes; each transaction holds the narrower listings' items, newest first", async () => {
    const chain = sim.world.chain(CHAIN)!;
    for (const a of [ROUTER, wallet, FACTORY, WALLET]) {
      const all = await txs(a, a === wallet ? 'pageSize=3' : 'pageSize=100');
      const blocks = all.map((t: any) => Number(t.nativeTransaction.blockNumber));
      expect(blocks, a).toEqual([...blocks].sort((x, y) => y - x));
      // The native listing's transactions, as it serves them.
      const native = [...iterate(sim.world.activity.listNative(chain, a, {}, DEMO.now))];
      const byHash = new Map(all.map((t: any) => [t.nativeTransaction.txHash, t]));
      for (const n of native) expect(byHash.get(n.txHash)?.nativeTransaction, a).toEqual(n);
      // Every transfer and call of the narrower listings, once, in its transaction.
      for (const [type, list] of [['ERC-20', 'erc20Transfers'], ['ERC-721', 'erc721Transfers'], ['ERC-1155', 'erc1155Transfers']] as const) {
        const want = [...iterate(addressTransfers(sim.world).list(chain, type, a, {}, DEMO.now))];
        const got = all.flatMap((t: any) => t[list].map((x: any) => ({ ...x, blockNumber: t.nativeTransaction.blockNumber, blockTimestamp: t.nativeTransaction.blockTimestamp, blockHash: t.nativeTransaction.blockHash, txHash: t.nativeTransaction.txHash })));
        expect(sorted(got.map((x: any) => JSON.stringify(x, Object.keys(x).sort()))), `${a} ${type}`).toEqual(sorted(want.map((x: any) => JSON.stringify(x, Object.keys(x).sort()))));
      }
      const calls = [...iterate(sim.world.listInternals(CHAIN, a))];
      expect(all.flatMap((t: any) => t.internalTransactions).length, a).toBe(calls.length);
      for (const c of calls) expect(byHash.get(c.txHash)?.internalTransactions, a).toContainEqual(strip(c));
      // No transaction without an item of the address.
      for (const t of all) {
        const items = t.erc20Transfers.length + t.erc721Transfers.length + t.erc1155Transfers.length + t.internalTransactions.length;
        expect(items > 0 || native.some((n) => n.txHash === t.nativeTransaction.txHash), a).toBe(true);
      }
    }
    expect((await txs(FACTORY)).some((t: any) => t.internalTransactions.length > 1)).toBe(true);
    expect((await txs(ROUTER)).some((t: any) => t.erc20Transfers.length > 1)).toBe(true);
  });

  it('honours the block range, the sort order and the chain given by blockchain id', async () => {
    const all = await txs(ROUTER);
    const blocks = all.map((t: any) => Number(t.nativeTransaction.blockNumber));
    const [lo, hi] = [blocks[30]!, blocks[8]!];
    const ranged = await txs(ROUTER, `startBlock=${lo}&endBlock=${hi}&pageSize=4`);
    expect(ranged.length).toBeGreaterThan(5);
    expect(ranged).toEqual(all.filter((t: any) => Number(t.nativeTransaction.blockNumber) >= lo && Number(t.nativeTransaction.blockNumber) < hi));
    expect(await txs(ROUTER, 'sortOrder=asc&pageSize=100')).toEqual([...all].reverse());
    expect(await txs(ROUTER, 'sortOrder=desc&pageSize=100')).toEqual(all);
    const chain = sim.world.chain(CHAIN)!;
    expect((await get(`/v1/chains/${chain.blockchainId}/addresses/${ROUTER}/transactions?pageSize=3`)).body.transactions).toEqual(all.slice(0, 3));
    expect(new AddressDetails(sim.world).list(chain, ROUTER, {}, DEMO.now).length).toBe(all.length);
  });

  it('lists the collectibles of both standards at the head, with the contract filter', async () => {
    const chain = sim.world.chain(CHAIN)!;
    const head = sim.world.headBlock(CHAIN);
    const all = await pages(`/v1/chains/${CHAIN}/addresses/${WALLET}/balances:listCollectibles?pageSize=2`, 'collectibleBalances', 'collectibleBalances');
    expect(all).toEqual([...sim.world.activity.erc721(chain, WALLET, head), ...sim.world.activity.erc1155(chain, WALLET, head)]);
    expect(new Set(all.map((b: any) => b.ercType))).toEqual(new Set(['ERC-721', 'ERC-1155']));
    const contract = all.find((b: any) => b.ercType === 'ERC-1155').address;
    const only = await pages(`/v1/chains/${CHAIN}/addresses/${WALLET}/balances:listCollectibles?contractAddress=${contract}&pageSize=500`, 'collectibleBalances', 'collectibleBalances');
    expect(only).toEqual(all.filter((b: any) => b.address === contract));
  });

  it('names every bad parameter', async () => {
    const base = `/v1/chains/${CHAIN}/addresses/${ROUTER}`;
    const first = (await get(`${base}/transactions?pageSize=2`)).body;
    const bad: Array<[string, string]> = [
      [`${base}/transactions?pageSize=101`, 'pageSize must not be greater than 100'],
      [`${base}/transactions?pageSize=0`, 'pageSize must not be less than 1'],
      [`${base}/transactions?startBlock=x`, 'startBlock must be an integer'],
      [`${base}/transactions?startBlock=9&endBlock=9`, 'startBlock must be less than endBlock'],
      [`${base}/transactions?sortOrder=newest`, 'sortOrder must be one of: asc, desc'],
      [`${base}/transactions?pageToken=nope`, 'pageToken is invalid'],
      // A token is good for its own query only.
      [`${base}/transactions?pageSize=2&sortOrder=asc&pageToken=${encodeURIComponent(first.nextPageToken)}`, 'pageToken does not match'],
      [`/v1/chains/${CHAIN}/addresses/0x12/transactions`, 'address must be 0x followed by 40 hex digits'],
      [`/v1/chains/c-chain/addresses/${ROUTER}/transactions`, 'chainId must be an EVM chain id'],
      [`${base}/balances:listCollectibles?pageSize=501`, 'pageSize must not be greater than 500'],
      [`${base}/balances:listCollectibles?contractAddress=0x12`, 'contractAddress must be 0x followed by 40 hex digits'],
    ];
    for (const [path, message] of bad) {
      const r = await get(path);
      expect(r.status, path).toBe(400);
      expect(r.body.message, path).toContain(message);
    }
    expect((await get(`/v1/chains/99999/addresses/${ROUTER}/transactions`)).status).toBe(404);
    expect((await get(`/v1/chains/99999/addresses/${ROUTER}/balances:listCollectibles`)).status).toBe(404);
  });
});

describe('configuration of the full transaction listing and collectibles', () => {
  const check = (stream: Record<string, unknown>) => () => checkPipeline({ name: 'x', streams: [{ chainId: CHAIN, ...stream }] }, 'x.yaml');

  it('names the place of every bad value', () => {
    expect(check({ table: 'address_tx_transfers' })).toThrow(/streams\[0\]\.addresses: is required for address_tx_transfers/);
    expect(check({ table: 'address_tx_internals', addresses: ['0x12'] })).toThrow(/streams\[0\]\.addresses\[0\]: "0x12" is not an EVM address/);
    expect(check({ table: 'address_tx_transfers', addresses: [ROUTER], tokenTypes: ['ERC-20'] })).toThrow(/streams\[0\]\.tokenTypes: unknown key for address_tx_transfers/);
    expect(check({ table: 'address_tx_transfers', addresses: [ROUTER], startBlock: 10, endBlock: 10 })).toThrow(/streams\[0\]\.endBlock: startBlock 10 must be below endBlock 10/);
    expect(check({ table: 'address_tx_internals', addresses: [ROUTER], pageSize: 101 })).toThrow(/pageSize: 101 is out of bounds .*\(1 to 100\)/);
    expect(check({ table: 'address_tx_transfers', addresses: [ROUTER], chunks: 0 })).toThrow(/streams\[0\]\.chunks: must be at least 1/);
    expect(check({ table: 'collectible_balances', addresses: [ROUTER], blockNumber: 5 })).toThrow(/streams\[0\]\.blockNumber: unknown key for collectible_balances/);
    expect(check({ table: 'collectible_balances', addresses: [ROUTER], pageSize: 501 })).toThrow(/\(1 to 500\)/);
    expect(check({ table: 'collectible_balances', addresses: [ROUTER], contractAddresses: ['0xnothex'] })).toThrow(/streams\[0\]\.contractAddresses\[0\]: "0xnothex" is not an EVM address/);
  });

  it('asks for the listing newest first, a partition per address; collectibles per holder, or per holder and contract', () => {
    const p = checkPipeline({ name: 'x', streams: [{ table: 'address_tx_transfers', chainId: CHAIN, addresses: [ROUTER, FACTORY] }] }, 'x.yaml');
    expect(addressTxTransfers.partitions(p.streams[0]!)).toEqual([ROUTER, FACTORY].map((a) => ({
      id: `${CHAIN}/${low(a)}`, path: { chainId: CHAIN, address: low(a) }, query: { sortOrder: 'desc' }, values: { chainId: CHAIN, address: low(a) },
    })));
    const c = checkPipeline({ name: 'x', streams: [{ table: 'collectible_balances', chainId: CHAIN, addresses: [WALLET], contractAddresses: [DEMO.contracts.erc721, DEMO.contracts.erc1155] }] }, 'x.yaml');
    expect(collectibleBalances.partitions(c.streams[0]!).map((x) => [x.id, x.query.contractAddress])).toEqual(
      [DEMO.contracts.erc721, DEMO.contracts.erc1155].map((k) => [`${CHAIN}/${low(WALLET)}/${low(k)}`, low(k)]),
    );
  });
});
