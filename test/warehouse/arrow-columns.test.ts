// warehouse/arrow.ts builds each Arrow column from its DuckDB vector's buffers (batch); these hold
// it to the value-by-value build from @duckdb/node-api's items (batchByItems), buffer by buffer,
// for every mapped type: NULLs at the chunk edges, chunks of odd sizes, values at the types'
// limits, lists whose items are not in order, and a large result through the library against
// DuckDB's own count and digest of it.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import duckdb from '@duckdb/node-bindings';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { type Data, Type, type Decimal, type RecordBatch, type Table } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { arrowResult, type ArrowResult } from '../../src/warehouse/arrow.js';
import { openLake } from '../../src/warehouse/lake.js';

let db: DuckDBInstance;
let conn: DuckDBConnection;

beforeAll(async () => {
  db = await DuckDBInstance.create(':memory:');
  conn = await db.connect();
  await conn.run("SET TimeZone = 'UTC'");
});

afterAll(() => {
  conn.closeSync();
  db.closeSync();
});

function valid(d: Data, i: number): boolean {
  return d.nullBitmap === undefined || d.nullBitmap.length === 0 || ((d.nullBitmap[(d.offset + i) >> 3]! >> ((d.offset + i) & 7)) & 1) === 1;
}

/** The bytes of a typed array. */
const bytesOf = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/**
 * `got` equals `want` as Arrow reads them: type, length, NULL count, each row's validity and,
 * for each valid row, its value's bytes; lists by their offsets and items, structs by their entries.
 */
function expectSame(got: Data, want: Data, at: string): void {
  expect(String(got.type), at).toBe(String(want.type));
  expect(got.length, at).toBe(want.length);
  expect(got.nullCount, at).toBe(want.nullCount);
  const n = want.length;
  for (let i = 0; i < n; i++) if (valid(got, i) !== valid(want, i)) expect(valid(got, i), `${at} row ${i} validity`).toBe(valid(want, i));
  switch (want.typeId) {
    case Type.Null:
      return;
    case Type.Bool:
      for (let i = 0; i < n; i++) {
        if (!valid(want, i)) continue;
        const bit = (d: Data) => (d.values[(d.offset + i) >> 3]! >> ((d.offset + i) & 7)) & 1;
        if (bit(got) !== bit(want)) expect(bit(got), `${at} row ${i}`).toBe(bit(want));
      }
      return;
    case Type.Utf8: {
      const [g, w] = [bytesOf(got.values), bytesOf(want.values)];
      for (let i = 0; i < n; i++) {
        if (!valid(want, i)) continue;
        const text = (d: Data, b: Uint8Array) => Buffer.from(b.subarray(d.valueOffsets[d.offset + i]!, d.valueOffsets[d.offset + i + 1]!)).toString('hex');
        const [x, y] = [text(got, g), text(want, w)];
        if (x !== y) expect(x, `${at} row ${i}`).toBe(y);
      }
      return;
    }
    case Type.List: {
      for (let i = 0; i <= n; i++) if (got.valueOffsets[i] !== want.valueOffsets[i]) expect(got.valueOffsets[i], `${at} offset ${i}`).toBe(want.valueOffsets[i]);
      expectSame(got.children[0]!, want.children[0]!, `${at}[]`);
      return;
    }
    case Type.Struct:
      want.children.forEach((c, k) => expectSame(got.children[k]!, c, `${at}.${(want.type.children[k] as { name: string }).name}`));
      return;
    default: {
      // Fixed width: each valid row's bytes (the slots of NULLs hold anything).
      const width = want.typeId === Type.Decimal ? 16 : (want.values as ArrayBufferView & { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
      const [g, w] = [bytesOf(got.values), bytesOf(want.values)];
      for (let i = 0; i < n; i++) {
        if (!valid(want, i)) continue;
        const [x, y] = [g.subarray((got.offset + i) * width, (got.offset + i + 1) * width), w.subarray((want.offset + i) * width, (want.offset + i + 1) * width)];
        if (Buffer.compare(x, y) !== 0) expect(Buffer.from(x).toString('hex'), `${at} row ${i}`).toBe(Buffer.from(y).toString('hex'));
      }
    }
  }
}

function expectSameBatch(result: ArrowResult, got: RecordBatch, want: RecordBatch): void {
  expect(got.numRows).toBe(want.numRows);
  result.schema.fields.forEach((f, k) => expectSame(got.data.children[k]!, want.data.children[k]!, f.name));
}

/**
 * Each chunk of `sql`'s result through both builds, compared; `change` may rewrite a chunk's
 * vectors first. Returns the chunks' sizes.
 */
async function compare(sql: string, change?: (chunk: { chunk: duckdb.DataChunk; rowCount: number }) => void): Promise<number[]> {
  const result = await arrowResult(conn, sql);
  const r = result['result'];
  const sizes: number[] = [];
  for (let chunk = await r.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await r.fetchChunk()) {
    change?.(chunk);
    sizes.push(chunk.rowCount);
    expectSameBatch(result, result.batch(chunk), result.batchByItems(chunk));
  }
  return sizes;
}

/** NULL at both edges of each chunk of 2,048 rows (0, 2047, 2048, 4095) and at one row in five. */
const nullAt = (x: string) => `CASE WHEN range IN (0, 2047, 2048, 4095) OR range % 5 = 1 THEN NULL ELSE ${x} END`;

const TYPES = [
  `(range % 256 - 128)::TINYINT`,
  `(range * 7 % 65536 - 32768)::SMALLINT`,
  `(range * 104729 % 4294967296 - 2147483648)::INTEGER`,
  `CASE range % 3 WHEN 0 THEN -9223372036854775808 WHEN 1 THEN 9223372036854775807 ELSE range * -1000000007 END::BIGINT`,
  `(range % 256)::UTINYINT`,
  `(range * 7 % 65536)::USMALLINT`,
  `(range * 104729 % 4294967296)::UINTEGER`,
  `CASE range % 2 WHEN 0 THEN 18446744073709551615 ELSE range * 1000000007 END::UBIGINT`,
  `(range / 3.0 - 500)::FLOAT`,
  `CASE range % 4 WHEN 0 THEN 'nan'::DOUBLE WHEN 1 THEN '-inf'::DOUBLE ELSE range / 7.0 - 300 END::DOUBLE`,
  `range % 3 = 0`,
  `DATE '1901-03-04' + (range * 17)::INTEGER`,
  `TIMESTAMP '1950-06-01 12:34:56.123456' + to_microseconds(range * 987654321)`,
  `TIMESTAMPTZ '1969-12-31 23:59:59.999999+00' + to_microseconds(range * 1000003)`,
  `(TIMESTAMP '1960-01-01 00:00:00' + to_seconds(range * 86399))::TIMESTAMP_S`,
  `(TIMESTAMP '1960-01-01 00:00:00.123' + to_microseconds(range * 86399001))::TIMESTAMP_MS`,
  `(TIMESTAMP '1960-01-01 00:00:00.123456' + to_microseconds(range * 86399001))::TIMESTAMP_NS`,
  `(((range - 2500) * 3 % 9999) / 100)::DECIMAL(4,2)`,
  `(((range - 2500) * 104729 % 999999999) / 1000)::DECIMAL(9,3)`,
  `CASE range % 3 WHEN 0 THEN 999999999999999999 WHEN 1 THEN -999999999999999999 ELSE (range - 2500) * 1000000007 END::DECIMAL(18,0)`,
  `((range - 2500) * 123456789.123456)::DECIMAL(18,6)`,
  `CASE range % 3 WHEN 0 THEN 99999999999999999999999999999999999999 WHEN 1 THEN -99999999999999999999999999999999999999 ELSE (range - 2500)::HUGEINT * 12345678901234567890123456789 END::DECIMAL(38,0)`,
  `((range - 2500)::HUGEINT * 12345678901234567890123)::DECIMAL(38,10)`,
  // BIGNUM (the views' amounts): a uint256, a small value (inline in DuckDB's vector), a long negative one.
  `CASE range % 3 WHEN 0 THEN '115792089237316195423570985008687907853269984665640564039457584007913129639935'::BIGNUM WHEN 1 THEN (range - 2500)::BIGNUM ELSE ('-' || repeat('98', 20 + range % 20))::BIGNUM END`,
  `CASE range % 3 WHEN 0 THEN 99999999999999999999999999999999999999 WHEN 1 THEN -99999999999999999999999999999999999999 ELSE (range - 2500)::HUGEINT * 1234567890123456789012345 END::HUGEINT`,
  `CASE range % 2 WHEN 0 THEN 99999999999999999999999999999999999999 ELSE range::UHUGEINT * 1234567890123456789012345 END::UHUGEINT`,
  // Empty, inline (up to 12 bytes), just past it, long, and not ASCII.
  `CASE range % 6 WHEN 0 THEN '' WHEN 1 THEN 'abcdefghijkl' WHEN 2 THEN 'abcdefghijklm' WHEN 3 THEN printf('0x%040x', range * 2654435761) WHEN 4 THEN 'ü€😀' || range ELSE repeat('é', range % 40) END`,
  `json_object('k', range, 'v', repeat('x', range % 20))`,
  `[range, NULL, range * 2][1:range % 4]`,
  `CASE WHEN range % 7 = 0 THEN NULL ELSE [printf('%d', range), NULL, repeat('t', range % 15)] END`,
  `[[range], NULL, [range + 1, range + 2]][1:range % 4]`,
  `{'n': CASE WHEN range % 3 = 0 THEN NULL ELSE range END, 's': printf('s%d', range), 'd': (range * 1000000007)::DECIMAL(38,0), 'l': [range::DOUBLE]}`,
  `[{'a': range, 'b': printf('0x%040x', range)}, NULL]`,
];

describe('DuckDB vectors -> Arrow columns, against value-by-value', () => {
  const select = (rows: number, where = '') => `SELECT ${TYPES.map((t, k) => `${nullAt(t)} AS c${k}`).join(', ')}, NULL AS nothing FROM range(${rows}) ${where}`;

  it('equals it for every type, with NULLs at the chunks\' edges', async () => {
    expect(await compare(select(5000))).toEqual([2048, 2048, 904]);
  });

  it('equals it for chunks of odd sizes, and of one row', async () => {
    const sizes = await compare(select(20000, 'WHERE range % 7 <> 3 AND range % 11 <> 5'));
    expect(sizes.some((n, i) => n !== 2048 && i < sizes.length - 1)).toBe(true);
    expect(await compare(select(1))).toEqual([1]);
    expect(await compare(select(2049, 'WHERE range >= 2048'))).toEqual([1]);
  });

  it('keeps the values at the limits exactly', async () => {
    const result = await arrowResult(
      conn,
      `SELECT * FROM (VALUES (0, -9223372036854775807::BIGINT - 1, 18446744073709551615::UBIGINT, 99999999999999999999999999999999999999::DECIMAL(38,0), DATE '1969-12-31', TIMESTAMPTZ '1969-12-31 23:59:59.999999+00', -99999999999999999999999999999999999999::HUGEINT, 'ü'),
        (1, 9223372036854775807, 0, -99999999999999999999999999999999999999, DATE '1600-02-29', TIMESTAMPTZ '2262-04-11 23:47:16.854775+00', 99999999999999999999999999999999999999, repeat('x', 100000)),
        (2, NULL, NULL, -1, NULL, NULL, -1, NULL)) AS t(i, big, ubig, dec, day, stamp, huge, txt) ORDER BY i`,
    );
    const batch = result.batch((await result['result'].fetchChunk())!);
    const col = (name: string) => batch.getChild(name)!;
    const words = (name: string) =>
      [0, 1, 2].map((i) => {
        const v = new DataView(col(name).data[0]!.values.buffer, col(name).data[0]!.values.byteOffset + 16 * i, 16);
        return BigInt.asIntN(128, (v.getBigUint64(8, true) << 64n) | v.getBigUint64(0, true));
      });
    expect([col('big').get(0), col('big').get(1), col('big').get(2)]).toEqual([-9223372036854775808n, 9223372036854775807n, null]);
    expect([col('ubig').get(0), col('ubig').get(1)]).toEqual([18446744073709551615n, 0n]);
    expect(words('dec')).toEqual([10n ** 38n - 1n, 1n - 10n ** 38n, -1n]);
    expect(words('huge')).toEqual([1n - 10n ** 38n, 10n ** 38n - 1n, -1n]);
    expect([(col('huge').type as Decimal).precision, (col('huge').type as Decimal).scale]).toEqual([38, 0]);
    expect([...col('day').data[0]!.values.subarray(0, 2)]).toEqual([-1, Date.UTC(1600, 1, 29) / 86_400_000]);
    expect([...(col('stamp').data[0]!.values as BigInt64Array).subarray(0, 2)]).toEqual([-1n, BigInt(Date.UTC(2262, 3, 11, 23, 47, 16, 854)) * 1000n + 775n]);
    expect([col('txt').get(0), (col('txt').get(1) as string).length, col('txt').get(2)]).toEqual(['ü', 100000, null]);
  });

  it('refuses a HUGEINT or UHUGEINT of 10^38 and beyond, naming its column, as value by value does', async () => {
    for (const [value, type, expr = `${value}::${type}`] of [
      ['100000000000000000000000000000000000000', 'HUGEINT'],
      ['-100000000000000000000000000000000000000', 'HUGEINT'],
      ['-170141183460469231731687303715884105728', 'HUGEINT', '(-170141183460469231731687303715884105727::HUGEINT - 1)'],
      ['100000000000000000000000000000000000000', 'UHUGEINT'],
      ['340282366920938463463374607431768211455', 'UHUGEINT'],
    ]) {
      // In the middle of the second chunk, after rows near the limit that pass.
      const sql = `SELECT CASE WHEN range = 3000 THEN ${expr} WHEN range % 2 = 0 THEN 99999999999999999999999999999999999999::${type} ELSE NULL END AS "the h" FROM range(4000)`;
      const result = await arrowResult(conn, sql);
      const first = (await result['result'].fetchChunk())!;
      expect(result.batch(first).numRows).toBe(2048);
      const second = (await result['result'].fetchChunk())!;
      const message = `column "the h": ${value} (${type}) has more than 38 digits, more than Arrow's Decimal128 holds`;
      expect(() => result.batch(second)).toThrow(UsageError);
      expect(() => result.batch(second)).toThrow(message);
      expect(() => result.batchByItems(second)).toThrow(message);
    }
  });

  it('equals it for constant vectors and a NULL column', async () => {
    await compare(`SELECT 'the same text, long enough' AS c, 42 AS k, NULL::INTEGER AS n, [1, 2] AS l, 1.5::DECIMAL(38,2) AS d FROM range(3000)`);
  });

  it('equals it for lists whose items are not in order in the child vector', async () => {
    // The entries (offset and length, two uint64 each) rewritten in reverse: row i gets row
    // n - 1 - i's items, so the child is read out of order, through every type's gather. No list
    // is NULL (a NULL's entry holds anything, and would be moved to a valid row).
    const sizes = await compare(`SELECT [{'i': range, 'n': CASE WHEN range % 4 = 0 THEN NULL ELSE range END, 's': printf('0x%040x', range), 't': 'short', 'd': range::DECIMAL(38,0), 'e': range::DECIMAL(9,2), 'h': range::HUGEINT, 'b': range % 2 = 0, 'at': TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_microseconds(range)}, NULL][1:range % 3] AS l FROM range(5000)`, (chunk) => {
      const v = duckdb.data_chunk_get_vector(chunk.chunk, 0);
      const entries = new BigUint64Array(duckdb.vector_get_data(v, chunk.rowCount * 16).buffer.slice(0, chunk.rowCount * 16));
      const reversed = new BigUint64Array(entries.length);
      for (let i = 0; i < chunk.rowCount; i++) reversed.set(entries.subarray(2 * (chunk.rowCount - 1 - i), 2 * (chunk.rowCount - i)), 2 * i);
      duckdb.copy_data_to_vector(v, 0, reversed.buffer, 0, reversed.byteLength);
    });
    expect(sizes).toEqual([2048, 2048, 904]);
  });
});

describe('a large result through the library', () => {
  const ROWS = 200_000;
  const SQL = `SELECT range AS id, range * 0.5::DOUBLE AS half, CASE WHEN range % 97 = 0 THEN NULL ELSE (range::HUGEINT - 100000) * 12345678901234567890123456789 END::DECIMAL(38,0) AS amount,
      printf('0x%040x', range * 2654435761) AS address, TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_microseconds(range * 1234567) AS stamp, range % 3 = 0 AS flag
    FROM range(${ROWS}) ORDER BY id`;

  /** Each row as text (NULL as ∅), as DuckDB's digest below spells it. */
  function lines(t: Table | RecordBatch): string[] {
    const cols = ['id', 'half', 'amount', 'address', 'stamp', 'flag'].map((c) => t.getChild(c)!);
    const out: string[] = [];
    const amounts = cols[2]!.data as Data<Decimal>[];
    const stamps = cols[4]!.data;
    let row = 0;
    for (let k = 0; k < amounts.length; k++) {
      const [a, s] = [amounts[k]!, stamps[k]!];
      const words = new DataView(a.values.buffer, a.values.byteOffset, a.values.byteLength);
      for (let i = 0; i < a.length; i++, row++) {
        const amount = valid(a, i) ? BigInt.asIntN(128, (words.getBigUint64(16 * i + 8, true) << 64n) | words.getBigUint64(16 * i, true)).toString() : '∅';
        out.push([cols[0]!.get(row), cols[1]!.get(row) * 2, amount, cols[3]!.get(row), (s.values as BigInt64Array)[i], cols[5]!.get(row)].join('|'));
      }
    }
    return out;
  }

  it('query and batches hold every row, equal to DuckDB\'s count and digest of the same result', async () => {
    const lake = mkdtempSync(join(tmpdir(), 'cl-arrow-lake-'));
    mkdirSync(join(lake, '_state'));
    const l = await openLake(lake);
    try {
      const reader = await conn.runAndReadAll(`SELECT count(*)::INTEGER AS n, count(amount)::INTEGER AS amounts, sum(id)::VARCHAR AS ids,
          md5(string_agg(concat_ws('|', id, (half * 2)::BIGINT, coalesce(amount::VARCHAR, '∅'), address, epoch_us(stamp), flag), chr(10) ORDER BY id)) AS digest FROM (${SQL})`);
      const [n, amounts, ids, digest] = reader.getRows()[0]!;
      const t = await l.query(SQL);
      expect(t.numRows).toBe(ROWS);
      expect(t.numRows).toBe(n);
      expect(t.getChild('amount')!.length - t.getChild('amount')!.nullCount).toBe(amounts);
      let sum = 0n;
      for (const d of t.getChild('id')!.data) for (const x of d.values as BigInt64Array) sum += x;
      expect(sum.toString()).toBe(ids);
      expect(createHash('md5').update(lines(t).join('\n')).digest('hex')).toBe(digest);

      const hash = createHash('md5');
      let rows = 0;
      let batches = 0;
      for await (const b of l.batches(SQL)) {
        for (const line of lines(b)) hash.update(rows++ === 0 ? line : `\n${line}`);
        batches++;
      }
      expect(rows).toBe(ROWS);
      expect(batches).toBeGreaterThanOrEqual(Math.ceil(ROWS / 2048));
      expect(hash.digest('hex')).toBe(digest);
    } finally {
      l.close();
    }
  });
});
