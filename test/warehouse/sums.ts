// The first sums an analyst writes over a lake's amounts, and what they must give: the digits
// received (value_raw), summed here with BigInt. Each SQL surface (`chainlake query`, the warehouse
// file with views or rows, the library) is held to these.
import { expect } from 'vitest';

type Row = Record<string, unknown>;

/** Per token, as written first: the DECIMAL(38,0) of the files overflowed it, or left out values over 38 digits. */
export const SUM_PER_TOKEN = 'SELECT token_address, sum(value) AS total FROM erc_transfers GROUP BY token_address ORDER BY token_address';
/** The top receivers by amount. */
export const TOP_RECEIVERS = 'SELECT to_address, sum(value) AS received FROM erc_transfers GROUP BY to_address ORDER BY received DESC NULLS LAST, to_address LIMIT 5';
/** What the sums are computed from. */
export const DIGITS = 'SELECT token_address, to_address, value_raw FROM erc_transfers';

/** SUM_PER_TOKEN's and TOP_RECEIVERS' rows (sums as digits) from DIGITS' rows. */
export function exactSums(rows: Row[]): { perToken: Row[]; top: Row[] } {
  const add = (m: Map<string, bigint | null>, k: string, raw: unknown) => {
    const was = m.get(k) ?? null;
    m.set(k, raw === null || raw === undefined ? was : (was ?? 0n) + BigInt(raw as string));
  };
  const tokens = new Map<string, bigint | null>();
  const receivers = new Map<string, bigint | null>();
  for (const r of rows) {
    add(tokens, r.token_address as string, r.value_raw);
    add(receivers, r.to_address as string, r.value_raw);
  }
  const text = (v: bigint | null) => (v === null ? null : v.toString());
  const perToken = [...tokens].sort(([a], [b]) => (a < b ? -1 : 1)).map(([token_address, total]) => ({ token_address, total: text(total) }));
  const top = [...receivers]
    .sort(([a, x], [b, y]) => (x === y ? (a < b ? -1 : 1) : x === null ? 1 : y === null ? -1 : x > y ? -1 : 1))
    .slice(0, 5)
    .map(([to_address, received]) => ({ to_address, received: text(received) }));
  // The lake holds amounts over 38 digits, and the largest receivers got some of them: a sum that
  // left them out, or rounded them, could not equal these.
  expect(rows.some((r) => typeof r.value_raw === 'string' && r.value_raw.replace(/^0+/, '').length > 38)).toBe(true);
  expect(top.every((r) => r.received !== null && r.received.length > 38)).toBe(true);
  return { perToken, top };
}
