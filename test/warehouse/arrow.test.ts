// Arrow output: `export --format arrow` (IPC file), `query --format arrow` (IPC stream) and the
// library (`import { openLake } from 'chainlake'`), read back with apache-arrow's own readers.
// Decimals are decoded here from the raw 128-bit words as well as through Arrow's own formatting,
// and compared with the `_raw` digits or DuckDB's text of the same value, never with a float.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { Field, RecordBatchFileReader, RecordBatchReader, tableFromIPC, TimeUnit, Type, type Data, type Decimal, type List, type Table, type TimestampMicrosecond } from 'apache-arrow';
import { beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { arrowResult, refuseTerminal, writeArrow } from '../../src/warehouse/arrow.js';
import { sqlString } from '../../src/load/paths.js';
import { lakeRows } from '../helpers.js';
import { cliHere, cliHereBytes, sharedDemoLake } from '../lake-fixture.js';
import { DIGITS, exactSums, SUM_PER_TOKEN, TOP_RECEIVERS } from './sums.js';

/** Each value of a Decimal128 column as its unscaled integer, from the little-endian words. */
function unscaled(t: Table, name: string): Array<bigint | null> {
  const out: Array<bigint | null> = [];
  for (const d of t.getChild(name)!.data as Data<Decimal>[]) {
    const v = new DataView(d.values.buffer, d.values.byteOffset, d.values.byteLength);
    for (let i = 0; i < d.length; i++) {
      const at = (d.offset + i) * 16;
      out.push(d.getValid(i) ? BigInt.asIntN(128, (v.getBigUint64(at + 8, true) << 64n) | v.getBigUint64(at, true)) : null);
    }
  }
  return out;
}

/** Each value of a timestamp column in its unit (microseconds here), as stored. */
function stamps(t: Table, name: string): Array<bigint | null> {
  const out: Array<bigint | null> = [];
  for (const d of t.getChild(name)!.data as Data<TimestampMicrosecond>[]) for (let i = 0; i < d.length; i++) out.push(d.getValid(i) ? d.values[d.offset + i]! : null);
  return out;
}

/** Values of a column as Arrow's reader gives them (Decimal values through its own formatting). */
function texts(t: Table, name: string): Array<string | null> {
  const col = t.getChild(name)!;
  return Array.from({ length: col.length }, (_, i) => {
    const x: unknown = col.get(i);
    return x === null ? null : String(x);
  });
}

const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));

let lake: string;

beforeAll(async () => {
  // Read only (what is written goes to folders of the tests' own).
  lake = await sharedDemoLake();
});

describe('export --format arrow', () => {
  it('writes an Arrow IPC file whose amounts, timestamps, JSON and NULLs equal the lake, with nothing left beside it', async () => {
    const dir = tmp('cl-arrow-');
    const to = join(dir, 'transfers.arrow');
    const r = await cliHere(['export', 'erc_transfers', '--lake', lake, '--to', to]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('as arrow');
    expect(readdirSync(dir)).toEqual(['transfers.arrow']);
    const bytes = readFileSync(to);
    // The random-access format: magic at both ends, and a footer the file reader opens.
    expect(bytes.subarray(0, 6).toString()).toBe('ARROW1');
    expect(bytes.subarray(bytes.length - 6).toString()).toBe('ARROW1');
    const file = RecordBatchFileReader.from(bytes);
    file.open();
    expect(file.numRecordBatches).toBeGreaterThan(1);

    const t = tableFromIPC(bytes);
    const [{ n, big, over63, nulls }] = await lakeRows(lake, `SELECT count(*) AS n, count(*) FILTER (WHERE value > 9007199254740992) AS big, count(*) FILTER (WHERE value > 9223372036854775807) AS over63, count(*) - count(value) AS nulls FROM erc_transfers`);
    expect(t.numRows).toBe(Number(n));
    // The simulated world has amounts beyond doubles' 2^53 and beyond BIGINT, and ERC-721 NULLs.
    expect(Number(big)).toBeGreaterThan(0);
    expect(Number(over63)).toBeGreaterThan(0);
    expect(Number(nulls)).toBeGreaterThan(0);

    // An amount is its digits (BIGNUM in chainlake's SQL, Utf8 in Arrow), over 38 digits too.
    const value = t.schema.fields.find((f) => f.name === 'value')!;
    expect(value.type.typeId).toBe(Type.Utf8);
    const values = texts(t, 'value');
    const raws = texts(t, 'value_raw');
    let over38 = 0;
    values.forEach((v, i) => {
      const raw = raws[i]!;
      if (v === null) {
        // NULL only where there is no amount (ERC-721).
        expect(raw).toBeNull();
        return;
      }
      expect(v).toBe(BigInt(raw).toString());
      if (v.length > 38) over38++;
    });
    expect(over38).toBeGreaterThan(0);
    expect(values.filter((v) => v !== null && BigInt(v) > 2n ** 63n).length).toBe(Number(over63));
    expect(values.filter((v) => v === null).length).toBe(Number(nulls));

    const ts = t.schema.fields.find((f) => f.name === 'block_timestamp')!.type as TimestampMicrosecond;
    expect([ts.typeId, ts.unit, ts.timezone]).toEqual([Type.Timestamp, TimeUnit.MICROSECOND, 'UTC']);
    const json = t.schema.fields.find((f) => f.name === 'token_metadata')!;
    expect(json.type.typeId).toBe(Type.Utf8);
    expect(json.metadata.get('ARROW:extension:name')).toBe('arrow.json');

    // Row by row against DuckDB, matched by key (an export has no order).
    const key = (h: unknown, l: unknown, id: unknown) => `${h}|${l}|${id ?? ''}`;
    const duck = new Map(
      (await lakeRows(lake, 'SELECT tx_hash, log_index, token_id, epoch_us(block_timestamp)::VARCHAR AS us, token_metadata::VARCHAR AS meta, block_number::VARCHAR AS block FROM erc_transfers')).map((r) => [
        key(r.tx_hash, r.log_index, r.token_id),
        r,
      ]),
    );
    const [hashes, logs, ids, metas, blocks, us] = [texts(t, 'tx_hash'), texts(t, 'log_index'), texts(t, 'token_id'), texts(t, 'token_metadata'), texts(t, 'block_number'), stamps(t, 'block_timestamp')];
    expect(duck.size).toBe(t.numRows);
    for (let i = 0; i < t.numRows; i++) {
      const d = duck.get(key(hashes[i], logs[i], ids[i]))!;
      expect(d, key(hashes[i], logs[i], ids[i])).toBeDefined();
      expect(String(us[i])).toBe(d.us);
      expect(metas[i]).toBe(d.meta);
      expect(blocks[i]).toBe(d.block);
    }
    expect(metas.some((m) => m !== null)).toBe(true);
  });

  it('honours --where, --columns and --force, and keeps list columns as lists', async () => {
    const dir = tmp('cl-arrow-');
    const to = join(dir, 'd.bin');
    const args = ['export', 'delegators', '--lake', lake, '--to', to, '--format', 'arrow', '--columns', 'tx_hash,reward_addresses,amount_delegated,amount_delegated_raw', '--where', "delegation_status = 'active'"];
    expect((await cliHere(args)).code).toBe(0);
    const t = tableFromIPC(readFileSync(to));
    expect(t.schema.fields.map((f) => f.name)).toEqual(['tx_hash', 'reward_addresses', 'amount_delegated', 'amount_delegated_raw']);
    const want = await lakeRows(lake, "SELECT tx_hash, to_json(reward_addresses)::VARCHAR AS addrs FROM delegators WHERE delegation_status = 'active'");
    expect(want.length).toBeGreaterThan(0);
    expect(t.numRows).toBe(want.length);
    const list = t.schema.fields[1]!.type as List;
    expect([list.typeId, list.valueType.typeId]).toEqual([Type.List, Type.Utf8]);
    const got = new Map(texts(t, 'tx_hash').map((h, i) => [h, JSON.stringify(t.getChild('reward_addresses')!.get(i)!.toArray())]));
    for (const w of want) expect(got.get(w.tx_hash)).toBe(w.addrs);
    texts(t, 'amount_delegated').forEach((v, i) => expect(v).toBe(BigInt(texts(t, 'amount_delegated_raw')[i]!).toString()));

    const again = await cliHere(args);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('exists; add --force');
    expect((await cliHere([...args.slice(0, -2), '--force'])).code).toBe(0);
    expect(tableFromIPC(readFileSync(to)).numRows).toBeGreaterThan(want.length);
  });

  it('refuses a column Arrow cannot hold, naming it, and leaves no file', async () => {
    // A lake whose erc_transfers file carries a column of a type with no mapping (written by
    // another tool): the view shows it, so an export of every column meets it.
    const odd = tmp('cl-arrow-odd-');
    mkdirSync(join(odd, 'erc_transfers'));
    // A lake (a reader refuses a folder without states or run reports) of one hand-made file.
    mkdirSync(join(odd, '_runs'));
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    await conn.run(`COPY (SELECT '0xabc' AS tx_hash, INTERVAL 3 DAY AS gap) TO ${sqlString(join(odd, 'erc_transfers', 'x.parquet'))} (FORMAT parquet)`);
    conn.closeSync();
    const dir = tmp('cl-arrow-out-');
    const to = join(dir, 'odd.arrow');
    const r = await cliHere(['export', 'erc_transfers', '--lake', odd, '--to', to]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('column "gap": INTERVAL has no Arrow mapping');
    expect(r.stderr).toContain('CAST("gap" AS VARCHAR)');
    expect(readdirSync(dir)).toEqual([]);
    // Without that column the same export works.
    expect((await cliHere(['export', 'erc_transfers', '--lake', odd, '--to', to, '--columns', 'tx_hash'])).code).toBe(0);
    expect(texts(tableFromIPC(readFileSync(to)), 'tx_hash')).toEqual(['0xabc']);
  });
});

describe('query --format arrow', () => {
  // 5,000 rows with signed 32-digit amounts, then the edges: the largest 38-digit values both
  // ways, 2^64 and 2^63 both ways, -1, 0, and a NULL.
  const EDGES = ['99999999999999999999999999999999999999', '-99999999999999999999999999999999999999', '12345678901234567890123456789012345678', '-12345678901234567890123456789012345678', '18446744073709551616', '-18446744073709551616', '9223372036854775808', '-9223372036854775808', '-1', '0'];
  const SQL = `SELECT range AS i, d, CAST(d AS VARCHAR) AS d_text FROM (
      SELECT range, CAST(range::HUGEINT * 12345678901234567890123456789 * CASE WHEN range % 2 = 0 THEN 1 ELSE -1 END AS DECIMAL(38,0)) AS d FROM range(5000)
      UNION ALL SELECT 5000 + i, CAST(v AS DECIMAL(38,0)) FROM (VALUES ${EDGES.map((v, i) => `(${i}, '${v}')`).join(', ')}) AS e(i, v)
      UNION ALL SELECT 6000, NULL)`;

  it('streams several record batches whose decimals equal DuckDB\'s digits, negative ones included', async () => {
    const r = await cliHereBytes(['query', '--lake', lake, '--format', 'arrow', SQL]);
    expect(r.code, r.stderr).toBe(0);
    const bytes = r.stdout;
    const reader = RecordBatchReader.from(bytes);
    let batches = 0;
    let rows = 0;
    for (const b of reader) {
      batches++;
      rows += b.numRows;
    }
    expect(batches).toBeGreaterThan(2);
    expect(rows).toBe(5000 + EDGES.length + 1);
    const t = tableFromIPC(bytes);
    const d = unscaled(t, 'd');
    const text = texts(t, 'd_text');
    const shown = texts(t, 'd');
    d.forEach((v, i) => {
      expect(v === null ? null : v.toString()).toBe(text[i]);
      expect(shown[i]).toBe(text[i]);
    });
    for (const e of EDGES) expect(d).toContain(BigInt(e));
    expect(d.filter((v) => v !== null && v < 0n).length).toBeGreaterThan(2500);
    expect(d).toContain(null);
  });

  it('refuses a type with no mapping before writing anything, and a HUGEINT of more than 38 digits naming its column', async () => {
    const r = await cliHere(['query', '--lake', lake, '--format', 'arrow', 'SELECT 1 AS n, INTERVAL 2 HOUR AS gap']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('column "gap": INTERVAL has no Arrow mapping');
    expect(r.stdout).toBe('');
    const big = await cliHere(['query', '--lake', lake, '--format', 'arrow', 'SELECT 170141183460469231731687303715884105727::HUGEINT AS h']);
    expect(big.code).toBe(2);
    expect(big.stderr).toContain('column "h": 170141183460469231731687303715884105727 (HUGEINT) has more than 38 digits');
  });

  it('is refused on a terminal', () => {
    expect(() => refuseTerminal(true)).toThrow(UsageError);
    expect(() => refuseTerminal(true)).toThrow(/--format arrow writes binary Arrow IPC/);
    expect(() => refuseTerminal(false)).not.toThrow();
    expect(() => refuseTerminal(undefined)).not.toThrow();
  });
});

describe('DuckDB -> Arrow types', () => {
  /** The query's result through warehouse/arrow.ts into IPC bytes and back. */
  async function roundTrip(sql: string): Promise<Table> {
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    await conn.run("SET TimeZone = 'UTC'");
    const parts: Buffer[] = [];
    await writeArrow(await arrowResult(conn, sql), 'stream', (b) => void parts.push(b));
    conn.closeSync();
    return tableFromIPC(Buffer.concat(parts));
  }

  it('maps each type exactly and keeps its values', async () => {
    const t = await roundTrip(`SELECT
        (-9223372036854775807 - 1)::BIGINT AS big, 18446744073709551615::UBIGINT AS ubig, (-2147483648)::INTEGER AS int, (-32768)::SMALLINT AS small,
        (-128)::TINYINT AS tiny, 255::UTINYINT AS utiny, 4294967295::UINTEGER AS uint, 0.1::DOUBLE AS dbl, 1.5::FLOAT AS flt, true AS yes, false AS no,
        'ü€😀' AS txt, '{"a":[1,2]}'::JSON AS js, DATE '1969-12-31' AS day, TIMESTAMP '2024-02-29 23:59:59.999999' AS naive,
        TIMESTAMPTZ '1960-01-01 00:00:00.000001+00' AS zoned, (-1.234)::DECIMAL(10,3) AS dec, 123456789012345678::DECIMAL(18,0) AS dec18,
        (-99999999999999999999999999999999999999)::HUGEINT AS huge, ['a', NULL, 'b'] AS list, []::VARCHAR[] AS empty, NULL::VARCHAR[] AS nolist,
        [[1, 2], NULL] AS nested, {'k': 7, 'v': 'x'} AS st, NULL::INTEGER AS nothing,
        '115792089237316195423570985008687907853269984665640564039457584007913129639935'::BIGNUM AS uint256, (-5)::BIGNUM AS small_bignum`);
    const type = (name: string) => t.schema.fields.find((f: Field) => f.name === name)!.type;
    const row = t.get(0)!;
    expect(String(type('big'))).toBe('Int64');
    expect(row.big).toBe(-9223372036854775808n);
    expect(String(type('ubig'))).toBe('Uint64');
    expect(row.ubig).toBe(18446744073709551615n);
    expect([String(type('int')), row.int, String(type('small')), row.small, String(type('tiny')), row.tiny]).toEqual(['Int32', -2147483648, 'Int16', -32768, 'Int8', -128]);
    expect([String(type('utiny')), row.utiny, String(type('uint')), row.uint]).toEqual(['Uint8', 255, 'Uint32', 4294967295]);
    expect([String(type('dbl')), row.dbl, String(type('flt')), row.flt, String(type('yes')), row.yes, row.no]).toEqual(['Float64', 0.1, 'Float32', 1.5, 'Bool', true, false]);
    expect([String(type('txt')), row.txt, row.js]).toEqual(['Utf8', 'ü€😀', '{"a":[1,2]}']);
    expect(type('day').typeId).toBe(Type.Date);
    expect(t.getChild('day')!.data[0]!.values[0]).toBe(-1);
    const naive = type('naive') as TimestampMicrosecond;
    expect([naive.unit, naive.timezone ?? null]).toEqual([TimeUnit.MICROSECOND, null]);
    expect(stamps(t, 'naive')).toEqual([1709251199999999n]);
    expect((type('zoned') as TimestampMicrosecond).timezone).toBe('UTC');
    expect(stamps(t, 'zoned')).toEqual([-315619199999999n]);
    expect([(type('dec') as Decimal).precision, (type('dec') as Decimal).scale]).toEqual([10, 3]);
    expect(unscaled(t, 'dec')).toEqual([-1234n]);
    expect(unscaled(t, 'dec18')).toEqual([123456789012345678n]);
    expect([(type('huge') as Decimal).precision, (type('huge') as Decimal).scale]).toEqual([38, 0]);
    expect(unscaled(t, 'huge')).toEqual([-99999999999999999999999999999999999999n]);
    expect(String(type('list'))).toBe('List<Utf8>');
    expect(row.list.toArray()).toEqual(['a', null, 'b']);
    expect(row.empty.toArray()).toEqual([]);
    expect(row.nolist).toBeNull();
    expect(row.nested.toArray().map((x: { toArray(): unknown[] } | null) => x && [...x.toArray()])).toEqual([[1, 2], null]);
    expect(type('st').typeId).toBe(Type.Struct);
    expect(row.st.toJSON()).toEqual({ k: 7, v: 'x' });
    expect(row.nothing).toBeNull();
    expect([String(type('uint256')), row.uint256, String(type('small_bignum')), row.small_bignum]).toEqual(['Utf8', '115792089237316195423570985008687907853269984665640564039457584007913129639935', 'Utf8', '-5']);
  });

  it('keeps the schema of a result with no rows', async () => {
    const t = await roundTrip('SELECT 1::DECIMAL(38,0) AS v, now() AS at WHERE false');
    expect(t.numRows).toBe(0);
    const [v, at] = t.schema.fields.map((f: Field) => f.type);
    expect([v!.typeId, (v as Decimal).precision, (v as Decimal).scale]).toEqual([Type.Decimal, 38, 0]);
    expect([at!.typeId, (at as TimestampMicrosecond).unit, (at as TimestampMicrosecond).timezone]).toEqual([Type.Timestamp, TimeUnit.MICROSECOND, 'UTC']);
  });
});

describe('library', () => {
  it("opens a lake through the package's own name and reads exact amounts back", async () => {
    const { openLake, UsageError: LakeUsageError, RunError: LakeRunError } = await import('chainlake');
    const l = await openLake(lake);
    try {
      const t = await l.table('erc_transfers');
      // As src/tables.ts says (LakeTables): an amount is Utf8 of its exact digits.
      expect(t.schema.fields.find((f) => f.name === 'value')!.type.typeId).toBe(Type.Utf8);
      const [{ n }] = await lakeRows(lake, 'SELECT count(*) AS n FROM erc_transfers');
      expect(t.numRows).toBe(Number(n));
      const raws = texts(t, 'value_raw');
      let compared = 0;
      texts(t, 'value').forEach((v, i) => {
        if (v === null) return;
        expect(v).toBe(BigInt(raws[i]!).toString());
        compared++;
      });
      expect(compared).toBeGreaterThan(0);
      // The first sums an analyst writes: exact, as Utf8 digits.
      const rowsOf = async (sql: string) => (await l.query(sql)).toArray().map((r) => r.toJSON() as Record<string, unknown>);
      const want = exactSums(await rowsOf(DIGITS));
      const sums = await l.query(SUM_PER_TOKEN);
      expect(sums.schema.fields.find((f) => f.name === 'total')!.type.typeId).toBe(Type.Utf8);
      expect(await rowsOf(SUM_PER_TOKEN)).toEqual(want.perToken);
      expect(await rowsOf(TOP_RECEIVERS)).toEqual(want.top);

      const q = await l.query("SELECT -12345678901234567890123456789012345678::DECIMAL(38,0) AS v, TIMESTAMPTZ '2025-01-01 00:00:00.5+00' AS at");
      expect(unscaled(q, 'v')).toEqual([-12345678901234567890123456789012345678n]);
      expect(stamps(q, 'at')).toEqual([1735689600500000n]);

      // Two queries at once each get every row (a connection each: one shared connection would
      // end the first stream early, silently).
      const [a, b] = await Promise.all([l.query('SELECT range FROM range(10000)'), l.query('SELECT range FROM range(7000)')]);
      expect([a.numRows, b.numRows]).toEqual([10000, 7000]);

      let rows = 0;
      let batches = 0;
      for await (const batch of l.batches('SELECT range FROM range(5000)')) {
        rows += batch.numRows;
        batches++;
      }
      expect([rows, batches > 1]).toEqual([5000, true]);
      // A reader that stops after the first batch (the next chunk is being fetched meanwhile): the
      // fetch ends before the connection is let go, and the lake answers the next query.
      for await (const batch of l.batches('SELECT range FROM range(100000)')) {
        expect(batch.numRows).toBe(2048);
        break;
      }
      expect((await l.query('SELECT count(*) AS n FROM range(3)')).toArray()[0]!.toJSON().n).toBe(3n);
      // A failure after the first chunks were handed over (DuckDB's client ends such a stream as
      // a finished one): the reader's loop and query() throw it, with DuckDB's reason, and a
      // reader taking its time over each batch meanwhile changes nothing.
      const late = "SELECT CASE WHEN range < 500000 THEN range ELSE error('boom at ' || range) END AS v FROM range(2000000)";
      const failed = /^the query failed after \d+ rows of its result had been read, and what was read is not the whole result: Invalid Input Error: boom at \d+$/;
      const slow = async () => {
        for await (const _ of l.batches(late)) await new Promise((r) => setTimeout(r, 1));
      };
      await expect(slow()).rejects.toThrow(failed);
      await expect(l.query(late)).rejects.toThrow(failed);
      expect((await l.query('SELECT count(*) AS n FROM range(2000000)')).toArray()[0]!.toJSON().n).toBe(2000000n);

      await expect(l.table('nope' as 'erc_transfers')).rejects.toThrow('"nope" is not a table of the lake');
      // DuckDB's errors of a query come as the library's own (UsageError), as the CLI says them;
      // a failure part way through a result is a RunError.
      await expect(l.query(late)).rejects.toBeInstanceOf(LakeRunError);
      for (const [sql, said] of [
        ['SELEC 1', 'Parser Error: syntax error at or near "SELEC"'],
        ['SELECT count(*) FROM erc_transfer', 'lake.query: no table erc_transfer in the lake; did you mean erc_transfers?'],
        ['SELECT no_such_column FROM erc_transfers', 'lake.query: Binder Error: Referenced column "no_such_column" not found'],
        ['  ', 'lake.query: the SQL is empty'],
      ]) {
        const err = await l.query(sql!).catch((e: unknown) => e);
        expect(err, sql).toBeInstanceOf(LakeUsageError);
        expect((err as Error).message, sql).toContain(said);
      }
      const batchErr = await (async () => {
        for await (const _ of l.batches('SELECT * FROM erc_transfer')) void _;
      })().catch((e: unknown) => e);
      expect(batchErr).toBeInstanceOf(LakeUsageError);
      expect((batchErr as Error).message).toContain('lake.batches: no table erc_transfer in the lake; did you mean erc_transfers?');
    } finally {
      l.close();
    }
    await expect(l.query('SELECT 1')).rejects.toThrow('closed');
    await expect(openLake(join(lake, 'missing'))).rejects.toThrow('no such folder');
  });
});
