// The X-Chain's transactions and the C-Chain's atomic transactions of the data service
// (xchain_transactions, xchain_inputs, xchain_outputs, cchain_atomic_transactions,
// cchain_atomic_utxos), by address and time. A pipeline runs in-process against the simulator;
// every table is compared row for row with what the simulator's world served, the UTXOs agree with
// the P-Chain's tables of the same imports and exports, reruns add nothing, a moving clock adds
// only what is new, and every page the simulator serves passes the official client's schemas.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListCChainAtomicTransactionsResponse$inboundSchema, ListXChainTransactionsResponse$inboundSchema } from '@avalanche-sdk/chainkit/models/components';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { C_CHAIN, PRIMARY_DEMO, UTXO_PAGE_LIMIT, X_CHAIN, type PrimaryTxQuery } from '../../src/simulator/primary.js';
import { XC_DEMO, atomicWorld, type CChainAtomicTransaction, type XChainTransaction, type XcChain, type XcUtxo } from '../../src/simulator/primary_xc.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { AVAX_ASSET_ID } from '../../src/simulator/staking.js';
import { DEMO } from '../../src/simulator/world.js';
import { StateStore } from '../../src/state/store.js';
import { lakeRows, line, quiet, sorted, simulatorRun, expectStillRerun } from '../helpers.js';

const X_TABLES = ['xchain_transactions', 'xchain_inputs', 'xchain_outputs'];
const C_TABLES = ['cchain_atomic_transactions', 'cchain_atomic_utxos'];
const TABLES = [...X_TABLES, ...C_TABLES];
const tmp = () => mkdtempSync(join(tmpdir(), 'cl-primary-xc-'));
const rows = lakeRows;
const DAY = 86_400;
const X_START = DEMO.now - DAY;
const C_START = DEMO.now - 2 * DAY;
const OWNER = XC_DEMO.addresses[0].slice(2);

function pipeline(url: string): Pipeline {
  const x = { network: 'mainnet', addresses: [...XC_DEMO.addresses], startTimestamp: X_START };
  const c = { network: 'mainnet', addresses: [XC_DEMO.addresses[0]], evmAddresses: [...XC_DEMO.evmAddresses], startTimestamp: C_START };
  // The P-Chain's side of owner 0's imports and exports, to check that the chains agree.
  const p = { network: 'mainnet', addresses: ['P-' + OWNER], startTimestamp: C_START };
  return checkPipeline({
    name: 'xc',
    sources: { data: { url } },
    streams: [
      ...X_TABLES.map((table) => ({ table, ...x })),
      ...C_TABLES.map((table) => ({ table, ...c })),
      { table: 'platform_inputs', ...p },
      { table: 'platform_outputs', ...p },
    ],
  }, 'xc.yaml');
}

/** The queries an entry sends: one per address. */
function queriesOf(p: Pipeline, table: string, start?: number): PrimaryTxQuery[] {
  const s = p.streams.find((x) => x.table === table)!;
  const all = [...((s.addresses as string[] | undefined) ?? []), ...((s.evmAddresses as string[] | undefined) ?? [])];
  return all.map((a) => ({ addresses: [a], startTimestamp: start ?? (s.startTimestamp as number) }));
}

/** Every transaction the queries list at t, once each. */
function served<T extends XChainTransaction | CChainAtomicTransaction>(seed: number, chain: XcChain, queries: PrimaryTxQuery[], t: number): T[] {
  const byHash = new Map<string, T>();
  for (const q of queries) {
    const l = atomicWorld(seed, chain).listTransactions<T>('mainnet', q, t);
    for (let k = 0; k < l.length; k++) byHash.set(l.at(k).txHash, l.at(k));
  }
  return [...byHash.values()];
}

const avaxOf = (list: Array<{ assetId: string; amount: string }>) => {
  const a = list.filter((x) => x.assetId === AVAX_ASSET_ID.mainnet);
  return a.length ? a.reduce((n, x) => n + BigInt(x.amount), 0n).toString() : undefined;
};
const owners = (us: XcUtxo[]) => [...new Set(us.flatMap((u) => u.addresses))].sort();

const TX_COMMON_SQL = `tx_hash, tx_type, block_number, block_hash, epoch(block_timestamp)::BIGINT ts, memo, source_chain, destination_chain, avax_unlocked_raw, avax_created_raw,
  asset_ids_unlocked, addresses`;
const txCommon = (t: XChainTransaction | CChainAtomicTransaction, utxos: XcUtxo[]) =>
  [t.txHash, t.txType, t.blockHeight, t.blockHash, t.timestamp, t.memo, t.sourceChain, t.destinationChain, avaxOf(t.amountUnlocked), avaxOf(t.amountCreated),
    [...new Set(t.amountUnlocked.map((a) => a.assetId))], owners(utxos)];
const rowCommon = (r: Record<string, any>) =>
  [r.tx_hash, r.tx_type, r.block_number, r.block_hash, r.ts, r.memo, r.source_chain, r.destination_chain, r.avax_unlocked_raw, r.avax_created_raw, r.asset_ids_unlocked, r.addresses];

const xLine = (t: XChainTransaction) =>
  line(...txCommon(t, [...t.consumedUtxos, ...t.emittedUtxos]), t.chainFormat, t.consumedUtxos.length, t.emittedUtxos.length, t.assetCreated?.assetId, t.assetCreated?.symbol,
    t.assetCreated?.denomination, t.assetCreated?.cap);
const X_SQL = `SELECT ${TX_COMMON_SQL}, chain_format, input_count, output_count, created_asset_id, created_asset_symbol, created_asset_denomination, created_asset_cap FROM xchain_transactions`;
const xRow = (r: Record<string, any>) =>
  line(...rowCommon(r), r.chain_format, r.input_count, r.output_count, r.created_asset_id, r.created_asset_symbol, r.created_asset_denomination, r.created_asset_cap);

const cLine = (t: CChainAtomicTransaction) => {
  const evm = (t.evmInputs ?? t.evmOutputs)!;
  const accounts = [...new Set(evm.map((e) => ('fromAddress' in e ? e.fromAddress : e.toAddress).toLowerCase()))].sort();
  return line(...txCommon(t, [...(t.consumedUtxos ?? []), ...(t.emittedUtxos ?? [])]), accounts, avaxOf(evm.map((e) => e.asset)), (t.consumedUtxos ?? t.emittedUtxos)!.length);
};
const C_SQL = `SELECT ${TX_COMMON_SQL}, evm_addresses, evm_avax_raw, utxo_count FROM cchain_atomic_transactions`;
const cRow = (r: Record<string, any>) => line(...rowCommon(r), r.evm_addresses, r.evm_avax_raw, r.utxo_count);

const utxoLine = (t: { txHash: string; txType: string; blockHeight: number; timestamp: number }, u: XcUtxo, extra: unknown[] = []) =>
  line(t.txHash, t.txType, t.blockHeight, t.timestamp, ...extra, u.utxoId, u.creationTxHash, u.outputIndex, u.asset.amount, u.asset.assetId, u.asset.symbol, u.asset.denomination,
    u.addresses, u.threshold, u.locktime, u.utxoType, u.timestamp, u.createdOnChainId, u.consumedOnChainId, u.consumingTxHash, u.consumingTxTimestamp, u.credentials?.length);
const utxoSql = (table: string, extra = '') => `SELECT tx_hash, tx_type, block_number, epoch(block_timestamp)::BIGINT ts, ${extra} utxo_id, creation_tx_hash, output_index, amount_raw,
  asset_id, asset_symbol, asset_denomination, addresses, threshold, locktime, utxo_type, epoch(created_timestamp)::BIGINT ct, created_on_chain_id, consumed_on_chain_id,
  consuming_tx_hash, epoch(consuming_tx_timestamp)::BIGINT cst, json_array_length(credentials) creds FROM ${table}`;
const utxoRow = (r: Record<string, any>, extra: unknown[] = []) =>
  line(r.tx_hash, r.tx_type, r.block_number, r.ts, ...extra, r.utxo_id, r.creation_tx_hash, r.output_index, r.amount_raw, r.asset_id, r.asset_symbol, r.asset_denomination,
    r.addresses, r.threshold, r.locktime, r.utxo_type, r.ct, r.created_on_chain_id, r.consumed_on_chain_id, r.consuming_tx_hash, r.cst, r.creds);

/** What the lake should hold after runs up to time t: every transaction and UTXO served. */
async function expectLakeAsServed(lake: string, p: Pipeline, seed: number, t: number): Promise<void> {
  const xs = served<XChainTransaction>(seed, 'x', queriesOf(p, 'xchain_transactions'), t);
  expect(sorted((await rows(lake, X_SQL)).map(xRow))).toEqual(sorted(xs.map(xLine)));
  const ins = xs.flatMap((x) => x.consumedUtxos.map((u) => utxoLine(x, u)));
  expect(sorted((await rows(lake, utxoSql('xchain_inputs'))).map((r) => utxoRow(r)))).toEqual(sorted(ins));
  const outs = xs.flatMap((x) => x.emittedUtxos.map((u) => utxoLine(x, u)));
  expect(sorted((await rows(lake, utxoSql('xchain_outputs'))).map((r) => utxoRow(r)))).toEqual(sorted(outs));
  const cs = served<CChainAtomicTransaction>(seed, 'c', queriesOf(p, 'cchain_atomic_transactions'), t);
  expect(sorted((await rows(lake, C_SQL)).map(cRow))).toEqual(sorted(cs.map(cLine)));
  const cu = cs.flatMap((c) => [...(c.consumedUtxos ?? []).map((u) => utxoLine(c, u, [true])), ...(c.emittedUtxos ?? []).map((u) => utxoLine(c, u, [false]))]);
  expect(sorted((await rows(lake, utxoSql('cchain_atomic_utxos', 'imported,'))).map((r) => utxoRow(r, [r.imported])))).toEqual(sorted(cu));
}

describe('X- and C-Chain tables', () => {
  const seed = 12;
  const run = simulatorRun(seed, pipeline, 40);

  it('lands every transaction and UTXO as served, amounts exact', async () => {
    await expectLakeAsServed(run.lake, run.p, seed, DEMO.now);
    const [x] = await rows(run.lake, `SELECT count(DISTINCT tx_type) ntypes, count(*) FILTER (WHERE created_asset_id IS NOT NULL) created,
      count(*) FILTER (WHERE len(asset_ids_unlocked) > 1) multi, count(*) FILTER (WHERE avax_unlocked::VARCHAR <> avax_unlocked_raw) AS off FROM xchain_transactions`);
    expect(x).toEqual({ ntypes: '4', created: expect.anything(), multi: expect.anything(), off: '0' });
    expect(Number(x!.created)).toBeGreaterThan(0);
    expect(Number(x!.multi)).toBeGreaterThan(0);
    // An 18-decimal asset's uint64 amounts pass 2^53 and keep every digit.
    const [big] = await rows(run.lake, `SELECT count(*) n, count(*) FILTER (WHERE amount::VARCHAR <> amount_raw) AS off FROM xchain_outputs WHERE amount > 9007199254740993`);
    expect(Number(big!.n)).toBeGreaterThan(0);
    expect(big!.off).toBe('0');
    const [types] = await rows(run.lake, `SELECT typeof(amount) a, typeof(locktime) l, typeof(output_index) i FROM xchain_inputs LIMIT 1`);
    expect(types).toEqual({ a: 'BIGNUM', l: 'DECIMAL(20,0)', i: 'BIGINT' });
    const [c] = await rows(run.lake, `SELECT count(*) FILTER (WHERE tx_type = 'ImportTx') imports, count(*) FILTER (WHERE tx_type = 'ExportTx') exports,
      count(*) FILTER (WHERE list_contains(evm_addresses, '${XC_DEMO.evmAddresses[0]}')) mine FROM cchain_atomic_transactions`);
    expect(Number(c!.imports)).toBeGreaterThan(0);
    expect(Number(c!.exports)).toBeGreaterThan(0);
    expect(Number(c!.mine)).toBeGreaterThan(0);
  });

  it('keys are unique, and each transaction adds up: inputs = outputs + the fee', async () => {
    for (const [table, key] of [['xchain_transactions', 'tx_hash'], ['xchain_inputs', 'tx_hash, utxo_id'], ['xchain_outputs', 'tx_hash, utxo_id'],
      ['cchain_atomic_transactions', 'tx_hash'], ['cchain_atomic_utxos', 'tx_hash, utxo_id']]) {
      const [k] = await rows(run.lake, `SELECT count(*) n, count(DISTINCT (network, ${key})) d FROM ${table}`);
      expect(k!.n, table).toBe(k!.d);
    }
    // Per asset, what its inputs unlock is what its outputs create, but AVAX (the fee) and a new asset (minted).
    const off = await rows(run.lake, `
      WITH i AS (SELECT tx_hash, asset_id, sum(amount) s FROM xchain_inputs GROUP BY ALL), o AS (SELECT tx_hash, asset_id, sum(amount) s FROM xchain_outputs GROUP BY ALL),
        io AS (SELECT tx_hash, asset_id, coalesce(i.s, 0) unlocked, coalesce(o.s, 0) created FROM i FULL JOIN o USING (tx_hash, asset_id))
      SELECT tx_hash, asset_id, unlocked, created FROM io JOIN xchain_transactions t USING (tx_hash)
      WHERE asset_id IS DISTINCT FROM t.created_asset_id
        AND unlocked <> created + CASE WHEN asset_id = '${AVAX_ASSET_ID.mainnet}' THEN t.avax_unlocked - t.avax_created ELSE 0 END`);
    expect(off).toEqual([]);
    // A C-Chain import credits what it takes less the fee; an export debits what it puts out plus the fee.
    const coff = await rows(run.lake, `
      WITH u AS (SELECT tx_hash, sum(amount) s FROM cchain_atomic_utxos GROUP BY 1)
      SELECT tx_hash FROM cchain_atomic_transactions JOIN u USING (tx_hash)
      WHERE CASE tx_type WHEN 'ImportTx' THEN u.s - evm_avax ELSE evm_avax - u.s END <> avax_unlocked - avax_created OR avax_unlocked <= avax_created`);
    expect(coff).toEqual([]);
  });

  it('agrees with the P-Chain tables: what one chain exports is what the other imports', async () => {
    // The P-Chain imports of owner 0 from the X-Chain (and the C-Chain) take the outputs of its exports there.
    for (const [chain, table, flag] of [[X_CHAIN.mainnet, 'xchain_outputs', ''], [C_CHAIN.mainnet, 'cchain_atomic_utxos', 'AND NOT o.imported']] as const) {
      const got = await rows(run.lake, `
        SELECT i.utxo_id, i.amount_raw a, o.amount_raw b, i.spent_tx_hash = o.tx_hash same_tx, o.consumed_on_chain_id dest, o.consuming_tx_hash = i.tx_hash spent
        FROM platform_inputs i LEFT JOIN ${table} o ON o.utxo_id = i.utxo_id ${flag}
        WHERE i.created_on_chain_id = '${chain}' AND list_contains(i.addresses, '${OWNER}') AND epoch(i.created_block_timestamp) >= ${chain === X_CHAIN.mainnet ? X_START : C_START}`);
      expect(got.length, table).toBeGreaterThan(0);
      for (const r of got) expect(r, table).toEqual({ utxo_id: r.utxo_id, a: r.a, b: r.a, same_tx: true, dest: '11111111111111111111111111111111LpoYY', spent: true });
    }
    // And the C-Chain imports of owner 0 take what the P-Chain exported to it.
    const got = await rows(run.lake, `
      SELECT o.utxo_id, o.amount_raw a, u.amount_raw b, u.creation_tx_hash = o.tx_hash same_tx FROM platform_outputs o LEFT JOIN cchain_atomic_utxos u ON u.utxo_id = o.utxo_id AND u.imported
      WHERE o.consumed_on_chain_id = '${C_CHAIN.mainnet}' AND list_contains(o.addresses, '${OWNER}') AND epoch(o.block_timestamp) < ${DEMO.now - 10}`);
    expect(got.length).toBeGreaterThan(0);
    for (const r of got) expect(r).toEqual({ utxo_id: r.utxo_id, a: r.a, b: r.a, same_tx: true });
  });

  it('a rerun of the still world adds nothing', async () => {
    await expectStillRerun(run.lake, run.p, TABLES);
    await expectLakeAsServed(run.lake, run.p, seed, DEMO.now);
  });
});

describe('a moving clock', () => {
  it('fetches from the newest committed time on and lands only what is new', async () => {
    const clock = { t: DEMO.now as number };
    const seed = 5;
    const sim = await startSimulator({ seed, worldNow: () => clock.t });
    try {
      const p = pipeline(sim.url);
      const lake = tmp();
      expect((await runPipeline(p, { lake, logger: quiet })).status).toBe('ok');
      const store = new StateStore(lake);
      const resume = (table: string) => queriesOf(p, table).map((q) => ({ ...q, startTimestamp: store.load(table, `mainnet/address=${q.addresses![0]}`).cursor.newest! }));
      const xResume = resume('xchain_transactions');
      const cResume = resume('cchain_atomic_transactions');
      const own = served<XChainTransaction>(seed, 'x', [queriesOf(p, 'xchain_transactions')[0]!], DEMO.now);
      expect(xResume[0]!.startTimestamp).toBe(Math.max(...own.map((t) => t.timestamp)));
      clock.t += 3 * 3600;
      const second = await runPipeline(p, { lake, logger: quiet });
      expect(second.status).toBe('ok');
      await expectLakeAsServed(lake, p, seed, clock.t);
      // Fetched again: the three hours, and the newest second of the first run, not the day before.
      const fetched = (table: string) => second.streams.find((s) => s.table === table)!.rows;
      const count = (chain: XcChain, qs: PrimaryTxQuery[]) => qs.reduce((k, q) => k + atomicWorld(seed, chain).listTransactions('mainnet', q, clock.t).length, 0);
      expect(fetched('xchain_transactions')).toBe(count('x', xResume));
      expect(fetched('cchain_atomic_transactions')).toBe(count('c', cResume));
      const [n] = await rows(lake, `SELECT count(*) n, count(*) FILTER (WHERE epoch(block_timestamp) > ${DEMO.now}) later FROM xchain_transactions`);
      expect(Number(n!.later)).toBeGreaterThan(0);
      expect(fetched('xchain_transactions')).toBeLessThan(Number(n!.n));
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
  const X_PATH = '/v1/networks/mainnet/blockchains/x-chain/transactions';
  const C_PATH = '/v1/networks/mainnet/blockchains/c-chain/transactions';
  const get = async (path: string) => {
    const r = await fetch(sim.url + path);
    return { status: r.status, body: JSON.parse(await r.text()) };
  };

  it('every page of a listing passes the official client schemas, with every transaction type', async () => {
    const listings: Array<[string, string, typeof ListXChainTransactionsResponse$inboundSchema | typeof ListCChainAtomicTransactionsResponse$inboundSchema, string[]]> = [
      [X_PATH, XC_DEMO.addresses.join(','), ListXChainTransactionsResponse$inboundSchema, ['BaseTx', 'CreateAssetTx', 'ExportTx', 'ImportTx']],
      [C_PATH, `${XC_DEMO.addresses[0]},${XC_DEMO.evmAddresses[0]}`, ListCChainAtomicTransactionsResponse$inboundSchema, ['ExportTx', 'ImportTx']],
      [`/v1/networks/mainnet/blockchains/${X_CHAIN.mainnet}/transactions`, XC_DEMO.addresses[1], ListXChainTransactionsResponse$inboundSchema, ['BaseTx', 'CreateAssetTx', 'ExportTx', 'ImportTx']],
      [`/v1/networks/mainnet/blockchains/${C_CHAIN.mainnet}/transactions`, XC_DEMO.addresses[1], ListCChainAtomicTransactionsResponse$inboundSchema, ['ExportTx', 'ImportTx']],
    ];
    let paged = 0;
    for (const [path, addresses, schema, types] of listings) {
      const seen = new Set<string>();
      let token: string | undefined;
      let pages = 0;
      do {
        const url: string = `${path}?addresses=${addresses}&startTimestamp=${DEMO.now - 3 * DAY}&pageSize=100${token ? `&pageToken=${token}` : ''}`;
        const { status, body } = await get(url);
        expect(status, url).toBe(200);
        const parsed = schema.safeParse(body);
        if (!parsed.success) console.error(url, JSON.stringify(parsed.error!.issues.slice(0, 5)));
        expect(parsed.success, url).toBe(true);
        expect(body.chainInfo).toEqual({ chainName: path.includes('x-chain') || path.includes(X_CHAIN.mainnet) ? 'x-chain' : 'c-chain', network: 'mainnet' });
        for (const t of body.transactions) seen.add(t.txType);
        const utxos = body.transactions.reduce((n: number, t: any) => n + (t.consumedUtxos?.length ?? 0) + (t.emittedUtxos?.length ?? 0), 0);
        // A page ends at 100 transactions or at the UTXO threshold.
        if (body.nextPageToken) expect(body.transactions.length === 100 || utxos >= UTXO_PAGE_LIMIT).toBe(true);
        token = body.nextPageToken;
        pages++;
      } while (token);
      if (pages > 1) paged++;
      expect([...seen].sort(), path).toEqual(types);
    }
    expect(paged).toBeGreaterThan(1);
  });

  it('honours txTypes, time filters and sortOrder', async () => {
    const a = XC_DEMO.addresses[0];
    const start = DEMO.now - DAY;
    const end = DEMO.now - DAY / 2;
    const asc = await get(`${X_PATH}?addresses=${a}&startTimestamp=${start}&endTimestamp=${end}&pageSize=5&sortOrder=asc`);
    const world = atomicWorld(3, 'x').listTransactions<XChainTransaction>('mainnet', { addresses: [a], startTimestamp: start, endTimestamp: end, sortOrder: 'asc' });
    expect(asc.body.transactions.map((t: any) => t.txHash)).toEqual(Array.from({ length: 5 }, (_, k) => world.at(k).txHash));
    const desc = await get(`${X_PATH}?addresses=${a}&startTimestamp=${start}&endTimestamp=${end}&pageSize=100`);
    const times = desc.body.transactions.map((t: any) => t.timestamp);
    expect(times.every((t: number) => t >= start && t <= end)).toBe(true);
    expect(times).toEqual([...times].sort((x: number, y: number) => y - x));
    const imports = await get(`${C_PATH}?addresses=${XC_DEMO.evmAddresses[0]}&txTypes=ImportTx&pageSize=100`);
    expect(imports.body.transactions.length).toBeGreaterThan(0);
    expect(imports.body.transactions.every((t: any) => t.txType === 'ImportTx' && t.evmOutputs[0].toAddress.toLowerCase() === XC_DEMO.evmAddresses[0])).toBe(true);
    // A P-Chain type filters out every X-Chain transaction.
    expect((await get(`${X_PATH}?addresses=${a}&txTypes=AddValidatorTx`)).body.transactions).toEqual([]);
  });

  it('answers 400 naming the parameter', async () => {
    const a = XC_DEMO.addresses[0];
    const cases: Array<[string, RegExp]> = [
      [`${X_PATH}?startTimestamp=5`, /^startTimestamp is supported only with addresses/],
      [`${C_PATH}?txTypes=ImportTx`, /^txTypes is supported only with addresses/],
      [`${X_PATH}?addresses=${XC_DEMO.evmAddresses[0]}`, /^addresses: "0x/],
      [`${C_PATH}?addresses=0x12`, /^addresses: "0x12"/],
      [`${X_PATH}?addresses=${a}&l1ValidationId=${PRIMARY_DEMO.l1ValidationIds[0]}`, /^l1ValidationId is supported only on the P-Chain/],
      [`${X_PATH}?addresses=${a}&txTypes=Swap`, /^txTypes: "Swap" must be one of/],
      [`${C_PATH}?addresses=${a}&startTimestamp=10&endTimestamp=5`, /^startTimestamp must not be greater than endTimestamp/],
      [`${X_PATH}?addresses=${a}&sortOrder=up`, /^sortOrder must be one of: asc, desc/],
      [`${C_PATH}?addresses=${a}&pageSize=0`, /^pageSize must not be less than 1/],
      [`/v1/networks/mainnet/blockchains/${X_CHAIN.fuji}/transactions`, /^blockchainId .* is not a chain of mainnet/],
    ];
    for (const [path, message] of cases) {
      const r = await get(path);
      expect(r.status, path).toBe(400);
      expect(r.body.message, path).toMatch(message);
    }
    // A token is the listing's own: not the P-Chain's, nor another chain's.
    const first = await get(`${X_PATH}?addresses=${a}&pageSize=2`);
    const other = await get(`${C_PATH}?addresses=${a}&pageSize=2&pageToken=${first.body.nextPageToken}`);
    expect(other.status).toBe(400);
    expect(other.body.message).toMatch(/pageToken/);
    // The C-Chain's blocks are those of its atomic transactions (cchain_blocks.test.ts); its balances
    // are its atomic memory's (cchain_atomic_memory.test.ts), in its own shape.
    expect((await get('/v1/networks/mainnet/blockchains/c-chain/blocks')).body.chainInfo.chainName).toBe('c-chain');
    const balances = await get(`/v1/networks/mainnet/blockchains/c-chain/balances?addresses=${a}`);
    expect(balances.status).toBe(200);
    expect(Object.keys(balances.body.balances).sort()).toEqual(['atomicMemoryLocked', 'atomicMemoryUnlocked']);
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
          { table: 'xchain_transactions', network: 'mainnet' },
          { table: 'xchain_inputs', network: 'mainnet', addresses: [XC_DEMO.addresses[0]], txTypes: ['BaseTx', 'AddValidatorTx'], startTimestamp: 1_700_000_010, endTimestamp: 1_700_000_005 },
          { table: 'cchain_atomic_transactions', network: 'mainnet', txTypes: ['BaseTx'] },
          { table: 'cchain_atomic_utxos', network: 'mainnet', evmAddresses: ['0x12'] },
          { table: 'xchain_outputs', network: 'fuji', addresses: [XC_DEMO.addresses[0]] },
        ],
      }, 'bad.yaml');
    } catch (err) {
      msg = (err as Error).message;
    }
    expect(msg).toMatch(/streams\[0\]\.addresses: .*required/);
    expect(msg).toContain('streams[1].txTypes[1]: "AddValidatorTx" is not an X-Chain transaction type');
    expect(msg).toContain('streams[1].endTimestamp: startTimestamp 2023-11-14T22:13:30Z must be before endTimestamp 2023-11-14T22:13:25Z (the end is excluded)');
    expect(msg).toContain('streams[2].addresses: give addresses or evmAddresses');
    expect(msg).toMatch(/streams\[3\]\.evmAddresses\[0\]: "0x12" is not an EVM address/);
    expect(msg).toContain('streams[2].txTypes[0]: "BaseTx" is not a C-Chain atomic transaction type');
    expect(msg).toMatch(/streams\[4\]\.addresses\[0\]: .* is not a fuji P-\/X-chain address/);
  });
});
