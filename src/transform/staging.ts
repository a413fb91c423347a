// How a row travels from the transform to DuckDB: one line of text per row.

/** DuckDB types of the staged (pre-cast) columns. */
export type StagedType = 'VARCHAR' | 'INTEGER' | 'DOUBLE' | 'BOOLEAN';

export interface StagedColumn {
  name: string;
  type: StagedType;
  /** SQL that turns the staged column into the landed one (DuckDB). */
  select: string;
  /** Free text: may hold the characters that frame staged text, so it may arrive encoded. */
  text?: boolean;
}

// Staged rows are lines of text that DuckDB's CSV reader splits in C++ (much faster than handing
// it values one by one): fields end at US (0x1f), rows at LF, NULL is SOH (0x01). A free-text value
// that holds any control character is staged as STX (0x02) + its JSON string, decoded in SQL.
export const FIELD = '\x1f';
export const NULL = '\x01';
const ENCODED = '\x02';
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1f]/;

/** A free-text value as staged. */
export function stageText(v: string): string {
  return CONTROL.test(v) ? ENCODED + JSON.stringify(v) : v;
}

/** The inverse of staging, for tests and debugging: a staged line back to named values. */
export function unstage(staged: StagedColumn[], line: string): Record<string, unknown> {
  const parts = line.split(FIELD);
  const out: Record<string, unknown> = {};
  staged.forEach((c, i) => {
    const v = parts[i]!;
    if (v === NULL) out[c.name] = null;
    else if (c.type === 'INTEGER' || c.type === 'DOUBLE') out[c.name] = Number(v);
    else if (c.type === 'BOOLEAN') out[c.name] = v === 'true';
    else out[c.name] = v.startsWith(ENCODED) ? JSON.parse(v.slice(1)) : v;
  });
  return out;
}
