// What each column type of a declaration means on its way from an item to the lake, in one table:
// the converter that checks and reads a value (values.ts), how the converted value is staged as
// text, the staged DuckDB type, the SQL that casts the staged column to the landed one, and the
// landed DuckDB type. The compiled row functions, the Parquet writer, the warehouse's views and the
// operations table all read it here.
import type { ColumnType, StreamDecl } from '../decl/stream.js';
import type { StagedColumn, StagedType } from './staging.js';
import type * as V from './values.js';

/** One landed column of a declared one (an amount lands as two: the DECIMAL and its `_raw` digits). */
interface Part {
  /** Appended to the declared name. */
  suffix: string;
  staged: StagedType;
  /** SQL from the staged column (`q`, quoted) to the landed one; none: landed as staged. */
  cast?: (q: string) => string;
  landed: string;
  /** Free text: may hold the characters that frame staged text, so it may arrive encoded. */
  text?: boolean;
}

export interface ColumnTypeSpec {
  /** The converter in values.ts that the compiled row function calls. */
  convert: Exclude<keyof typeof V, 'Bad'>;
  /** JavaScript that stages the converted value `x` as text; none for an amount, which stages its two parts itself. */
  stage?: string;
  parts: Part[];
}

const as = (staged: StagedType, landed: string, cast?: Part['cast']): Part[] => [{ suffix: '', staged, landed, ...(cast ? { cast } : {}) }];

export const COLUMN_TYPES: Record<ColumnType, ColumnTypeSpec> = {
  varchar: {
    convert: 'varchar',
    stage: 'stageText(x)',
    parts: [{ suffix: '', staged: 'VARCHAR', landed: 'VARCHAR', text: true, cast: (q) => `CASE WHEN starts_with(${q}, chr(2)) THEN json_extract_string(substr(${q}, 2), '$') ELSE ${q} END` }],
  },
  evm_address: { convert: 'evmAddress', stage: 'x', parts: as('VARCHAR', 'VARCHAR') },
  bigint: { convert: 'bigint', stage: 'x', parts: as('VARCHAR', 'BIGINT', (q) => `CAST(${q} AS BIGINT)`) },
  // DECIMAL(20,0), not UBIGINT: the same values exactly, and a type every engine reads (Iceberg and
  // most engines have no unsigned 64-bit integer; a signed one would wrap the top half).
  ubigint: { convert: 'ubigint', stage: 'x', parts: as('VARCHAR', 'DECIMAL(20,0)', (q) => `CAST(${q} AS DECIMAL(20,0))`) },
  integer: { convert: 'integer', stage: 'String(x)', parts: as('INTEGER', 'INTEGER') },
  double: { convert: 'double', stage: 'String(x)', parts: as('DOUBLE', 'DOUBLE') },
  boolean: { convert: 'boolean', stage: 'String(x)', parts: as('BOOLEAN', 'BOOLEAN') },
  timestamptz: { convert: 'timestamp', stage: 'String(x)', parts: as('DOUBLE', 'TIMESTAMPTZ', (q) => `to_timestamp(${q})`) },
  amount: {
    convert: 'amount',
    parts: [
      // Through HUGEINT: DuckDB's text-to-DECIMAL(38,0) cast is ~200x slower, and the staged
      // digits fit (at most 38, longer ones stage as NULL). Parquet gets the DECIMAL, never HUGEINT.
      { suffix: '', staged: 'VARCHAR', landed: 'DECIMAL(38,0)', cast: (q) => `CAST(CAST(${q} AS HUGEINT) AS DECIMAL(38,0))` },
      { suffix: '_raw', staged: 'VARCHAR', landed: 'VARCHAR' },
    ],
  },
  'varchar[]': { convert: 'varcharList', stage: 'JSON.stringify(x)', parts: as('VARCHAR', 'VARCHAR[]', (q) => `CAST(from_json(${q}, '["VARCHAR"]') AS VARCHAR[])`) },
  'integer[]': { convert: 'integerList', stage: 'JSON.stringify(x)', parts: as('VARCHAR', 'INTEGER[]', (q) => `CAST(from_json(${q}, '["INTEGER"]') AS INTEGER[])`) },
  json: { convert: 'json', stage: 'x', parts: as('VARCHAR', 'JSON', (q) => `CAST(${q} AS JSON)`) },
};

/** The landed columns of a declared one, by name, with what they are made of. */
function partsOf(decl: StreamDecl): Array<{ name: string; part: Part }> {
  return decl.columns.flatMap((c) => COLUMN_TYPES[c.type].parts.map((part) => ({ name: c.name + part.suffix, part })));
}

/** The staged columns of a declaration, in landing order. */
export function stagedColumns(decl: StreamDecl): StagedColumn[] {
  return partsOf(decl).map(({ name, part }) => {
    const q = `"${name}"`;
    return { name, type: part.staged, select: part.cast ? `${part.cast(q)} AS ${q}` : q, ...(part.text ? { text: true } : {}) };
  });
}

/** The landed schema of a declaration: [column, DuckDB type]. */
export function landedColumns(decl: StreamDecl): Array<[string, string]> {
  return partsOf(decl).map(({ name, part }) => [name, part.landed]);
}

/** The suffix of an amount's column in whole units of its token or asset (Column.units), in chainlake's SQL. */
export const UNITS_SUFFIX = '_units';

/** The amounts of a table that say their decimals, with them (a number, or the column that holds them). */
export function unitsOf(decl: StreamDecl): Array<{ name: string; decimals: number | string }> {
  return decl.columns.flatMap((c) => (c.type === 'amount' && c.units !== undefined ? [{ name: c.name, decimals: c.units }] : []));
}

/**
 * The doc of a landed column (as named in the lake); an amount's `_raw` twin gets one of its own,
 * and an amount says what to sum, in chainlake's SQL (its views: BIGNUM) and in the files.
 */
export function columnDoc(decl: StreamDecl, name: string): string {
  const u = unitsOf(decl).find((x) => x.name + UNITS_SUFFIX === name);
  if (u) {
    const d = typeof u.decimals === 'number' ? `10^${u.decimals}` : `10^${u.decimals} (NULL where that is unknown)`;
    return `${u.name} in whole units: ${u.name} / ${d}, a DOUBLE for reading and charts (chainlake's SQL only, not in the files); sum ${u.name} for an exact total`;
  }
  const c = decl.columns.find((x) => x.name === name || (x.type === 'amount' && `${x.name}_raw` === name));
  if (!c) return '';
  if (c.name !== name) return `exact digits of ${c.name} as received (text)`;
  if (c.type !== 'amount') return c.doc;
  return `${c.doc}. Exact in chainlake's SQL (BIGNUM): sum(${c.name}) as it is; in the Parquet files DECIMAL(38,0), NULL over 38 digits: sum ${c.name}_raw::BIGNUM there`;
}
