// An Iceberg reader that chainlake does not write with: icebird (with hyparquet under it), reading
// a lake's tables as any engine given their path would. icebird fetches over HTTP; here its fetch
// is given the lake's files from disk (file:// URIs, with byte ranges) or from the S3-compatible
// server on loopback (the s3:// URIs it turns into https://<bucket>.s3.amazonaws.com/...), and
// nothing else: a request elsewhere fails the test.
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { icebergMetadata, icebergRead } from 'icebird';
import { parquetMetadataAsync } from 'hyparquet';
import { STREAM_BY_TABLE } from '../src/streams/index.js';
import { landedColumns } from '../src/transform/columns.js';
import { openWarehouse } from '../src/warehouse/views.js';
import type { DuckDBConnection } from '../src/warehouse/duckdb.js';
import { amountsOf, landedAmount } from '../src/warehouse/amounts.js';
import { unitsOf, UNITS_SUFFIX } from '../src/transform/columns.js';

type Fetch = typeof globalThis.fetch;

function fromDisk(url: string, init?: RequestInit): Response {
  let body: Buffer;
  try {
    body = readFileSync(fileURLToPath(url));
  } catch {
    return new Response('not found', { status: 404 });
  }
  const range = new Headers(init?.headers).get('range');
  if (init?.method === 'HEAD') return new Response(null, { status: 200, headers: { 'content-length': String(body.length) } });
  const m = range && /bytes=(\d+)-(\d*)/.exec(range);
  if (!m) return new Response(new Uint8Array(body), { status: 200, headers: { 'content-length': String(body.length) } });
  const start = Number(m[1]);
  const end = m[2] ? Math.min(Number(m[2]) + 1, body.length) : body.length;
  return new Response(new Uint8Array(body.subarray(start, end)), { status: 206, headers: { 'content-length': String(end - start) } });
}

/**
 * Gives icebird's fetch the lake's files until the returned function puts fetch back. `s3`: the
 * loopback endpoint that s3:// URIs of `bucket` are read from (path-style).
 */
export function serveLakes(o: { s3?: { endpoint: string; bucket: string } } = {}): () => void {
  const real: Fetch = globalThis.fetch;
  const aws = o.s3 && `https://${o.s3.bucket}.s3.amazonaws.com/`;
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input instanceof Request ? input.url : input);
    if (url.startsWith('file://')) return fromDisk(url, init);
    if (aws && o.s3 && url.startsWith(aws)) return real(`${o.s3.endpoint}/${o.s3.bucket}/${url.slice(aws.length)}`, init);
    throw new Error(`the reader asked for ${url}, outside the lakes served`);
  }) as Fetch;
  return () => {
    globalThis.fetch = real;
  };
}

/** A lake folder's table as the URL engines are given. */
export function tableUrl(lake: string, table: string): string {
  return `${pathToFileURL(lake).href}/${table}`;
}

interface Field {
  name: string;
  type: string | { type: string };
}

/** One value as text both sides agree on (icebird's types on one side, DuckDB's text on the other). */
function canonical(v: unknown, type: Field['type'], json: boolean, side: 'iceberg' | 'view'): string | null {
  if (v === null || v === undefined) return null;
  if (typeof type !== 'string') return JSON.stringify(side === 'view' ? JSON.parse(String(v)) : v);
  if (type === 'timestamptz') return side === 'view' ? String(v) : String((v as Date).getTime());
  // icebird decodes a decimal to a double (hyparquet's choice): compared as that double here; the
  // exact digits are compared through the files icebird lists (exactRows).
  if (type.startsWith('decimal') || type === 'double') return String(Number(v));
  if (type === 'string' && json) return JSON.stringify(typeof v === 'string' && side === 'view' ? JSON.parse(v) : v);
  return String(v);
}

/** A table's rows as an independent Iceberg reader gives them, each as one sorted JSON line. */
export async function icebergRows(url: string, o: { metadataFileName?: string } = {}): Promise<{ rows: string[]; fields: Field[] }> {
  const metadata = await icebergMetadata({ tableUrl: url, ...(o.metadataFileName ? { metadataFileName: o.metadataFileName } : {}) });
  const schema = metadata.schemas.find((s: { 'schema-id': number }) => s['schema-id'] === metadata['current-schema-id'])!;
  const fields = schema.fields as Field[];
  const table = metadata.properties?.['chainlake.table'] as string;
  const decl = STREAM_BY_TABLE.get(table)!;
  const json = new Set(landedColumns(decl).filter(([, t]) => t === 'JSON').map(([n]) => n));
  const read = (metadata['current-snapshot-id'] ?? 0) > 0 && Number(metadata.snapshots!.find((s: { 'snapshot-id': number }) => s['snapshot-id'] === metadata['current-snapshot-id'])!.summary['total-data-files']) > 0;
  const got = read ? await icebergRead({ tableUrl: url, metadata }) : [];
  return { fields, rows: got.map((r: Record<string, unknown>) => JSON.stringify(fields.map((f) => canonical(r[f.name], f.type, json.has(f.name), 'iceberg')))).sort() };
}

/**
 * The same table through chainlake's warehouse view, in the same form. `warehouse`: the lake's views
 * opened once for several tables (made after the lake's last change: a view binds its table's files
 * when it is made), left open; without it, the one view asked for, on a database of its own.
 */
export async function viewRows(lake: string, table: string, fields: Field[], warehouse?: DuckDBConnection): Promise<string[]> {
  const decl = STREAM_BY_TABLE.get(table)!;
  const json = new Set(landedColumns(decl).filter(([, t]) => t === 'JSON').map(([n]) => n));
  const conn = warehouse ?? (await openWarehouse(lake, {}, new Set([table])));
  try {
    const q = (n: string) => `"${n}"`;
    // An amount as the files hold it (the view's is exact, the files' DECIMAL(38,0) NULL over 38 digits).
    const amounts = new Set(amountsOf(decl));
    const cols = fields.map((f) => (typeof f.type !== 'string' ? `to_json(${q(f.name)})::VARCHAR` : f.type === 'timestamptz' ? `epoch_ms(${q(f.name)})::VARCHAR` : amounts.has(f.name) ? `${landedAmount(f.name)}::VARCHAR` : `${q(f.name)}::VARCHAR`));
    const r = await conn.runAndReadAll(`SELECT ${cols.join(', ')} FROM ${q(table)}`);
    return r.getRows().map((row) => JSON.stringify(fields.map((f, i) => canonical(row[i], f.type, json.has(f.name), 'view')))).sort();
  } finally {
    if (!warehouse) conn.closeSync();
  }
}

/**
 * The data files the table's current snapshot lists, as icebird's manifest reader gives them:
 * their rows read with DuckDB and compared exactly (amounts to the last digit) with the view's.
 * `warehouse`: as viewRows'.
 */
export async function exactRowsDiffer(lake: string, table: string, files: string[], warehouse?: DuckDBConnection): Promise<number> {
  const wh = warehouse ?? (await openWarehouse(lake, {}, new Set([table])));
  try {
    const list = files.map((f) => `'${fileURLToPath(f).replace(/'/g, "''")}'`).join(', ');
    const mine = (await wh.runAndReadAll(`SELECT * FROM read_parquet([${list}], union_by_name = true, hive_partitioning = false)`)).getRowObjectsJson().map((r) => JSON.stringify(r)).sort();
    // The view's amounts as the files hold them (DECIMAL(38,0), NULL over 38 digits).
    const names = new Set((await wh.runAndReadAll(`DESCRIBE "${table}"`)).getRows().map(([n]) => String(n)));
    const landed = amountsOf(STREAM_BY_TABLE.get(table)!).filter((a) => names.has(a));
    const replace = landed.length ? ` REPLACE (${landed.map((a) => `${landedAmount(a)} AS "${a}"`).join(', ')})` : '';
    // Amounts in whole units are the views' own, not in the files.
    const units = unitsOf(STREAM_BY_TABLE.get(table)!).map((u) => u.name + UNITS_SUFFIX).filter((n) => names.has(n));
    const exclude = units.length ? ` EXCLUDE (${units.map((n) => `"${n}"`).join(', ')})` : '';
    const theirs = (await wh.runAndReadAll(`SELECT *${exclude}${replace} FROM "${table}"`)).getRowObjectsJson().map((r) => JSON.stringify(r)).sort();
    let differ = Math.abs(mine.length - theirs.length);
    for (let i = 0; i < Math.min(mine.length, theirs.length); i++) if (mine[i] !== theirs[i]) differ++;
    return differ;
  } finally {
    if (!warehouse) wh.closeSync();
  }
}

/** Each Parquet column's field id, read from a data file's footer by hyparquet. */
export async function parquetFieldIds(path: string): Promise<Map<string, number | undefined>> {
  const buf = readFileSync(path);
  const file = { byteLength: buf.length, slice: (s: number, e?: number) => buf.buffer.slice(buf.byteOffset + s, buf.byteOffset + (e ?? buf.length)) };
  const meta = await parquetMetadataAsync(file);
  const out = new Map<string, number | undefined>();
  for (const el of meta.schema.slice(1)) out.set(el.name, el.field_id);
  return out;
}

/**
 * Tables whose Iceberg snapshot does not name exactly the data files their partition states list,
 * as `table: what differs` ([] when every table is in step).
 */
export async function icebergOutOfStep(lake: string): Promise<string[]> {
  const { StateStore } = await import('../src/state/store.js');
  const { icebergReader, lakeUri } = await import('../src/iceberg/table.js');
  const store = new StateStore(lake);
  const reader = icebergReader(store.objects, lakeUri(store));
  const problems: string[] = [];
  for (const table of new Set(store.all().map((s) => s.table))) {
    const committed = store.committedFiles(table).filter((f) => f.startsWith(`${table}/`) && f.endsWith('.parquet')).sort();
    const snap = await reader.snapshotFiles(table);
    if (!snap) {
      if (committed.length) problems.push(`${table}: ${committed.length} committed files, no metadata`);
      continue;
    }
    if (JSON.stringify(snap.files) !== JSON.stringify(committed)) problems.push(`${table}: snapshot ${snap.files.length} files, states ${committed.length}`);
  }
  return problems;
}
