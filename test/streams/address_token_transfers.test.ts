// An address's token transfers (transactions:listErc20, :listErc721, :listErc1155), landed in one
// table, block-ranged and chunked as address_transactions is. Pipelines run in-process against the
// simulator; the table is compared row for row with what its world served, and with the token
// listings (erc_transfers) of the same transfers, and every page shape is checked against the
// official client's response schemas.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import type { RunReport } from '../../src/pipeline/report.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { DEMO, type World } from '../../src/simulator/world.js';
import { iterate } from '../../src/simulator/listing.js';
import { namedAddress, type BlockRange, type ErcType, type Transfer } from '../../src/simulator/evm.js';
import { addressTransfers } from '../../src/simulator/address_transfers.js';
import { addressTokenTransfers } from '../../src/streams/address_token_transfers.js';
import { expectCleanRun, lakeRows as rows, line, quiet, sorted } from '../helpers.js';
import { listingPages } from '../official.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'cl-tokentx-'));
const low = (a: string | undefined) => (a === undefined ? null : a.toLowerCase());
const CHAIN = '43114';
const TYPES: ErcType[] = ['ERC-20', 'ERC-721', 'ERC-1155'];
const ROUTES: Record<ErcType, [string, string]> = {
  'ERC-20': ['listErc20', 'erc20Transactions'],
  'ERC-721': ['listErc721', 'erc721Transactions'],
  'ERC-1155': ['listErc1155', 'erc1155Transactions'],
};
/** A named contract: a counterparty of many transfers. */
const ROUTER = namedAddress(CHAIN, 0);
/** An address the world does not hold: a party to no token transfer. */
const QUIET = '0x00000000000000000000000000000000000000aa';

/** A plain wallet of the world: the receiver of the newest ERC-20 transfer that went to one. */
function walletOf(w: World): string {
  for (const t of w.transfers(CHAIN, DEMO.contracts.erc20)) {
    if (t.to.name === undefined && !/^0x0{40}$/.test(t.to.address)) return t.to.address;
  }
  throw new Error('no wallet');
}

const tokenOf = (t: Transfer) => ('erc20Token' in t ? t.erc20Token : 'erc721Token' in t ? t.erc721Token : t.erc1155Token);
const typeOf = (t: Transfer) => tokenOf(t).ercType;

const COLUMNS = `address, tx_hash, block_number, epoch(block_timestamp)::BIGINT ts, block_hash, log_index,
  from_address, from_name, from_symbol, from_decimals, from_logo_uri, to_address, to_name, to_symbol, to_decimals, to_logo_uri,
  value_raw, token_address, token_type, token_id, token_name, token_symbol, token_decimals, token_logo_uri, token_uri,
  token_metadata::VARCHAR token_metadata, token_price_currency, token_price`;
/** A transfer as the table should hold it (every column the item carries). */
function transferLine(address: string, t: Transfer): string {
  const tok = tokenOf(t) as Record<string, any>;
  const meta = tok.metadata as Record<string, any> | undefined;
  return line(low(address), t.txHash, t.blockNumber, t.blockTimestamp, t.blockHash, t.logIndex,
    low(t.from.address), t.from.name, t.from.symbol, t.from.decimals, t.from.logoUri, low(t.to.address), t.to.name, t.to.symbol, t.to.decimals, t.to.logoUri,
    'value' in t ? t.value : undefined, low(tok.address), tok.ercType, tok.tokenId, tok.name ?? meta?.name, tok.symbol ?? meta?.symbol, tok.decimals ?? meta?.decimals,
    tok.logoUri, tok.tokenUri, meta, tok.price?.currencyCode, tok.price?.value);
}
const rowLine = (r: Record<string, any>) =>
  line(r.address, r.tx_hash, r.block_number, r.ts, r.block_hash, r.log_index,
    r.from_address, r.from_name, r.from_symbol, r.from_decimals, r.from_logo_uri, r.to_address, r.to_name, r.to_symbol, r.to_decimals, r.to_logo_uri,
    r.value_raw, r.token_address, r.token_type, r.token_id, r.token_name, r.token_symbol, r.token_decimals, r.token_logo_uri, r.token_uri,
    r.token_metadata === null ? null : JSON.parse(r.token_metadata), r.token_price_currency, r.token_price);

/** What the world lists for the addresses, every token type, at `at`. */
function served(w: World, addresses: string[], range: BlockRange = {}, at = DEMO.now as number): string[] {
  const chain = w.chain(CHAIN)!;
  return addresses.flatMap((a) => TYPES.flatMap((t) => [...iterate(addressTransfers(w).list(chain, t, a, range, at))].map((x) => transferLine(a, x))));
}

function pipeline(url: string, streams: Array<Record<string, unknown>>): Pipeline {
  return checkPipeline({ name: 'tokentx', sources: { data: { url } }, streams }, 'tokentx.yaml');
}
const stream = (r: RunReport, table: string) => r.streams.find((s) => s.table === table)!;

describe('address_token_transfers, whole histories', () => {
  let sim: Simulator;
  let lake: string;
  let p: Pipeline;
  let report: RunReport;
  let wallet: string;
  const contracts = [DEMO.contracts.erc20, DEMO.contracts.erc721, DEMO.contracts.erc1155];

  beforeAll(async () => {
    sim = await startSimulator({ seed: 21 });
    wallet = walletOf(sim.world);
    lake = tmp();
    p = pipeline(sim.url, [
      { table: 'address_token_transfers', chainId: CHAIN, addresses: [ROUTER, wallet, QUIET] },
      { table: 'erc_transfers', chainId: CHAIN, contracts },
    ]);
    report = await runPipeline(p, { lake, logger: quiet, flushRows: 150 });
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('completes every partition without rejects or unknown fields', () => expectCleanRun(report, { drift: false }));

  it('lands every transfer of every address as the world served it, field for field, amounts exact', async () => {
    const want = served(sim.world, [ROUTER, wallet, QUIET]);
    const got = (await rows(lake, `SELECT ${COLUMNS} FROM address_token_transfers`)).map(rowLine);
    expect(got.length).toBeGreaterThan(300);
    expect(got.length).toBe(want.length);
    expect(sorted(got)).toEqual(sorted(want));
    const [check] = await rows(lake, `SELECT
        count(*) FILTER (WHERE length(value_raw) > 38 AND value::VARCHAR = ltrim(value_raw, '0')) over38,
        count(*) FILTER (WHERE length(value_raw) <= 38 AND value::VARCHAR <> value_raw) mismatched,
        count(*) FILTER (WHERE token_type = 'ERC-721' AND value_raw IS NOT NULL) nft_values,
        count(*) FILTER (WHERE length(token_id) > 38) big_ids,
        count(*) FILTER (WHERE token_price IS NOT NULL) priced,
        count(*) - count(DISTINCT (chain_id, address, token_address, tx_hash, log_index, token_id)) dup_keys,
        count(*) FILTER (WHERE address NOT IN (from_address, to_address)) strangers,
        count(*) FILTER (WHERE address = '${low(QUIET)}') quiet,
        count(DISTINCT token_type) n_types, count(DISTINCT address) addresses,
        typeof(any_value(value)) value_type, typeof(any_value(token_decimals)) decimals_type, typeof(any_value(block_timestamp)) ts_type
      FROM address_token_transfers`);
    expect(Number(check!.over38)).toBeGreaterThan(0);
    expect(Number(check!.big_ids)).toBeGreaterThan(0);
    expect(Number(check!.priced)).toBeGreaterThan(0);
    expect(check).toMatchObject({
      mismatched: '0', nft_values: '0', dup_keys: '0', strangers: '0', quiet: '0', n_types: '3', addresses: '2',
      value_type: 'BIGNUM', decimals_type: 'INTEGER', ts_type: 'TIMESTAMP WITH TIME ZONE',
    });
  });

  it("agrees with the tokens' own listings (erc_transfers) on every transfer of the sampled contracts", async () => {
    const shared = `tx_hash, block_number, block_hash, log_index, from_address, to_address, value_raw, token_address, token_type, token_id,
      token_name, token_symbol, token_decimals, token_uri, token_metadata::VARCHAR m, token_price`;
    const inList = contracts.map((c) => `'${low(c)}'`).join(', ');
    for (const a of [ROUTER, wallet]) {
      const mine = await rows(lake, `SELECT ${shared} FROM address_token_transfers WHERE address = '${low(a)}' AND token_address IN (${inList})`);
      const theirs = await rows(lake, `SELECT ${shared} FROM erc_transfers WHERE '${low(a)}' IN (from_address, to_address)`);
      const asLine = (r: Record<string, any>) => line(...Object.values(r));
      expect(mine.length, a).toBeGreaterThan(5);
      expect(sorted(mine.map(asLine)), a).toEqual(sorted(theirs.map(asLine)));
    }
    // And the world's address listings are its tokens' listings filtered by party, every contract.
    const chain = sim.world.chain(CHAIN)!;
    for (const t of TYPES) {
      const byToken = sim.world.contractsOf(CHAIN).filter((c) => c.ercType === t)
        .flatMap((c) => [...sim.world.transfers(CHAIN, c.address)])
        .filter((x) => [x.from.address, x.to.address].some((p) => p.toLowerCase() === wallet.toLowerCase()));
      const byAddress = [...iterate(addressTransfers(sim.world).list(chain, t, wallet, {}, DEMO.now))];
      expect(byAddress.every((x) => typeOf(x) === t)).toBe(true);
      expect(sorted(byAddress.map((x) => JSON.stringify(x)))).toEqual(sorted(byToken.map((x) => JSON.stringify(x))));
    }
  });

  it('fetches each partition as block ranges at once below one pinned head, a listing per address and token type', () => {
    const s = stream(report, 'address_token_transfers');
    expect(s.chunks).toBeGreaterThan(2 * 3);
    expect(s.partitions).toBe(9);
  });

  it('a rerun on the same head adds nothing', async () => {
    const count = () => rows(lake, `SELECT count(*) n FROM address_token_transfers`);
    const before = await count();
    const second = await runPipeline(p, { lake, logger: quiet });
    expect(second.status).toBe('ok');
    expect(stream(second, 'address_token_transfers').rows).toBe(0);
    expect(await count()).toEqual(before);
  });
});

describe('address_token_transfers on a moving head', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    while (closers.length) await closers.pop()!();
  });

  it("appends a day's new transfers (and no old one), small pages, one range at a time", async () => {
    const clock = { t: DEMO.now as number };
    const sim = await startSimulator({ seed: 4, worldNow: () => clock.t });
    closers.push(() => sim.close());
    const wallet = walletOf(sim.world);
    const start = sim.world.headBlock(CHAIN) - 3_000_000;
    const p = pipeline(sim.url, [{ table: 'address_token_transfers', chainId: CHAIN, addresses: [ROUTER, wallet], startBlock: start, pageSize: 7, chunks: 1 }]);
    const lake = tmp();
    const first = await runPipeline(p, { lake, logger: quiet, flushRows: 20 });
    expect(first.status).toBe('ok');
    const firstHead = sim.world.headBlock(CHAIN);
    const firstRows = stream(first, 'address_token_transfers').rows;
    clock.t += 2 * 86_400;
    const second = await runPipeline(p, { lake, logger: quiet, flushRows: 20 });
    expect(second.status).toBe('ok');
    const want = served(sim.world, [ROUTER, wallet], { startBlock: start }, clock.t);
    const fresh = served(sim.world, [ROUTER, wallet], { startBlock: firstHead + 1 }, clock.t);
    expect(fresh.length).toBeGreaterThan(0);
    expect(stream(second, 'address_token_transfers').rows).toBe(fresh.length);
    expect(firstRows + fresh.length).toBe(want.length);
    const got = (await rows(lake, `SELECT ${COLUMNS} FROM address_token_transfers`)).map(rowLine);
    expect(sorted(got)).toEqual(sorted(want));
  });
});

describe('simulator routes of address token transfers', () => {
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
  const pages = (path: string, route: string) => listingPages(sim.url, path, route);
  const items = async (a: string, t: ErcType, query = 'pageSize=100') =>
    (await pages(`/v1/chains/${CHAIN}/addresses/${a}/transactions:${ROUTES[t][0]}?${query}`, ROUTES[t][1])).flatMap((b) => b.transactions);

  it("answers in the official client's shapes, every variant of item included, newest first", async () => {
    const all = Object.fromEntries(await Promise.all(TYPES.map(async (t) => [t, [...(await items(ROUTER, t)), ...(await items(wallet, t, 'pageSize=3'))]] as const)));
    for (const t of TYPES) {
      expect(all[t]!.length, t).toBeGreaterThan(20);
      expect(all[t]!.every((x: Transfer) => typeOf(x) === t)).toBe(true);
    }
    const e20 = all['ERC-20']!.map((x: any) => x.erc20Token);
    expect(e20.some((k: any) => k.price) && e20.some((k: any) => !k.price) && e20.some((k: any) => !k.logoUri)).toBe(true);
    const e721 = all['ERC-721']!.map((x: any) => x.erc721Token);
    expect(e721.some((k: any) => k.ownerAddress) && e721.some((k: any) => !k.ownerAddress)).toBe(true);
    const statuses = new Set([...e721, ...all['ERC-1155']!.map((x: any) => x.erc1155Token)].map((k: any) => k.metadata.indexStatus));
    expect(statuses.has('INDEXED') && statuses.size > 1).toBe(true);
    // Mints (from the zero address) and transfers of the address to either side.
    expect(all['ERC-20']!.some((x: any) => /^0x0{40}$/.test(x.from.address) || /^0x0{40}$/.test(x.to.address))).toBe(true);
    const router = await items(ROUTER, 'ERC-20');
    const blocks = router.map((x: any) => Number(x.blockNumber));
    expect(blocks).toEqual([...blocks].sort((a, b) => b - a));
    expect(router.some((x: any) => x.from.address === ROUTER) && router.some((x: any) => x.to.address === ROUTER)).toBe(true);
  });

  it('honours the block range and the chain given by blockchain id; an address without transfers gets an empty list', async () => {
    const all = await items(ROUTER, 'ERC-1155');
    const blocks = all.map((x: any) => Number(x.blockNumber));
    const [lo, hi] = [blocks[30]!, blocks[8]!];
    const ranged = await items(ROUTER, 'ERC-1155', `startBlock=${lo}&endBlock=${hi}&pageSize=4`);
    expect(ranged.length).toBeGreaterThan(5);
    expect(ranged).toEqual(all.filter((x: any) => Number(x.blockNumber) >= lo && Number(x.blockNumber) < hi));
    expect(await items(ROUTER, 'ERC-1155', `startBlock=${lo}`)).toEqual(all.filter((x: any) => Number(x.blockNumber) >= lo));
    const chain = sim.world.chain(CHAIN)!;
    expect((await get(`/v1/chains/${chain.blockchainId}/addresses/${ROUTER}/transactions:listErc1155?pageSize=3`)).body.transactions).toEqual(all.slice(0, 3));
    for (const t of TYPES) expect((await get(`/v1/chains/${CHAIN}/addresses/${QUIET}/transactions:${ROUTES[t][0]}`)).body).toEqual({ transactions: [] });
  });

  it('names every bad parameter', async () => {
    const base = `/v1/chains/${CHAIN}/addresses/${ROUTER}`;
    const first = (await get(`${base}/transactions:listErc20?pageSize=2`)).body;
    const bad: Array<[string, string]> = [
      [`${base}/transactions:listErc20?pageSize=101`, 'pageSize must not be greater than 100'],
      [`${base}/transactions:listErc721?pageSize=0`, 'pageSize must not be less than 1'],
      [`${base}/transactions:listErc1155?startBlock=x`, 'startBlock must be an integer'],
      [`${base}/transactions:listErc20?endBlock=-1`, 'endBlock must not be less than 0'],
      [`${base}/transactions:listErc721?startBlock=9&endBlock=9`, 'startBlock must be less than endBlock'],
      [`${base}/transactions:listErc20?pageToken=nope`, 'pageToken is invalid'],
      // A token is good for its own listing only.
      [`${base}/transactions:listErc721?pageSize=2&pageToken=${encodeURIComponent(first.nextPageToken)}`, 'pageToken does not match'],
      [`/v1/chains/${CHAIN}/addresses/0x12/transactions:listErc20`, 'address must be 0x followed by 40 hex digits'],
      [`/v1/chains/c-chain/addresses/${ROUTER}/transactions:listErc1155`, 'chainId must be an EVM chain id'],
    ];
    for (const [path, message] of bad) {
      const r = await get(path);
      expect(r.status, path).toBe(400);
      expect(r.body.message, path).toContain(message);
    }
    expect((await get(`/v1/chains/99999/addresses/${ROUTER}/transactions:listErc20`)).status).toBe(404);
  });
});

describe('configuration of address_token_transfers', () => {
  const check = (stream: Record<string, unknown>) => () => checkPipeline({ name: 'x', streams: [{ table: 'address_token_transfers', chainId: CHAIN, ...stream }] }, 'x.yaml');

  it('names the place of every bad value', () => {
    expect(check({})).toThrow(/streams\[0\]\.addresses: is required for address_token_transfers/);
    expect(check({ addresses: ['0x12'] })).toThrow(/streams\[0\]\.addresses\[0\]: "0x12" is not an EVM address/);
    expect(check({ addresses: [ROUTER], tokenTypes: ['ERC-20', 'erc721'] })).toThrow(/streams\[0\]\.tokenTypes\[1\]: "erc721" is not a token type \(ERC-20, ERC-721, ERC-1155\)/);
    expect(check({ addresses: [ROUTER], tokenTypes: 'ERC-20' })).toThrow(/streams\[0\]\.tokenTypes/);
    expect(check({ addresses: [ROUTER], startBlock: 10, endBlock: 10 })).toThrow(/streams\[0\]\.endBlock: startBlock 10 must be below endBlock 10/);
    expect(check({ addresses: [ROUTER], pageSize: 101 })).toThrow(/pageSize: 101 is out of bounds .*\(1 to 100\)/);
    expect(check({ addresses: [ROUTER], chunks: 0 })).toThrow(/streams\[0\]\.chunks: must be at least 1/);
    expect(check({ chainId: 'c-chain', addresses: [ROUTER] })).toThrow(/streams\[0\]\.chainId: "c-chain" is not an EVM chain id/);
  });

  it('makes a partition per address and token type, each asking its own listing', () => {
    const p = checkPipeline({ name: 'x', streams: [{ table: 'address_token_transfers', chainId: CHAIN, addresses: [ROUTER, QUIET], tokenTypes: ['ERC-1155', 'ERC-20'] }] }, 'x.yaml');
    const parts = addressTokenTransfers.partitions(p.streams[0]!);
    expect(parts.map((x) => [x.id, x.path.listing, x.values.address])).toEqual(
      [ROUTER, QUIET].flatMap((a) => [[`${CHAIN}/${low(a)}/erc-1155`, 'listErc1155', low(a)], [`${CHAIN}/${low(a)}/erc-20`, 'listErc20', low(a)]]),
    );
    const whole = checkPipeline({ name: 'x', streams: [{ table: 'address_token_transfers', chainId: CHAIN, addresses: [ROUTER] }] }, 'x.yaml');
    expect(addressTokenTransfers.partitions(whole.streams[0]!).map((x) => x.path.listing)).toEqual(['listErc20', 'listErc721', 'listErc1155']);
  });
});
