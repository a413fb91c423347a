// `chainlake status`: per partition, where its cursor stands, its rows and its last run. The text
// table fits a terminal's width: long partition ids (queries listing validators, 42-character
// addresses) are shortened in the middle of their longest parts, cursors and times are given
// shorter. `--format json` prints every partition whole, for scripts.
import type { PartitionState } from '../state/store.js';
import { isTableData, RAW } from '../state/names.js';
import { cursorProblem, highest, listingsOf, type Cursor } from '../state/cursor.js';
import { minute } from '../pipeline/report.js';
import { textTable } from '../text.js';
import { boundedAll, inert } from '../text.js';

const ELLIPSIS = '…';

/** `s` in at most `max` characters: its head and tail around an ellipsis. */
export function middle(s: string, max: number): string {
  if (s.length <= max) return s;
  if (max < 2) return s.slice(0, max);
  const head = Math.ceil((max - 1) / 2);
  return s.slice(0, head) + ELLIPSIS + s.slice(s.length - (max - 1 - head));
}

/** Parts of an id this long or shorter (a chain, a metric, `currency=usd`) are never cut... */
const SHORT_PART = 12;
/** ...and a long one is cut down to this at the most (`0x3196…907d`), or the id is cut as a whole. */
const PART_FLOOR = 9;

/**
 * A `/`-separated id in at most `max` characters: its long parts after the first (the table) lose
 * their middles, longest first, so the table, chain and metric stay whole and an address keeps
 * its head and tail (`erc_transfers/43114/0xb97ef9ef…c48a6e`). When that is not enough, the id
 * after the table is cut as a whole.
 */
export function shortenId(id: string, max: number): string {
  if (id.length <= max) return id;
  const parts = id.split('/');
  const lengths = parts.map((p) => p.length);
  for (let over = id.length - max; over > 0; over--) {
    const longest = lengths.indexOf(Math.max(...lengths.slice(1)), 1);
    if (longest < 1 || parts[longest]!.length <= SHORT_PART || lengths[longest]! <= PART_FLOOR) {
      const head = parts[0]!;
      return parts.length > 1 && head.length + PART_FLOOR < max ? `${head}/${middle(parts.slice(1).join('/'), max - head.length - 1)}` : middle(id, max);
    }
    lengths[longest]!--;
  }
  return parts.map((p, i) => middle(p, lengths[i]!)).join('/');
}

/**
 * Each id in at most `max` characters (shortenId), none two alike: ids that would read the same
 * (validator lists that differ in the middle, where the cut falls) show their table and the
 * stretch where they differ instead; ids still alike are shown whole, however wide.
 */
export function shortenIds(ids: readonly string[], max: number): string[] {
  const out = ids.map((id) => shortenId(id, max));
  const alike = (i: number) => ids.filter((id, j) => out[j] === out[i] && id !== ids[i]);
  const apart = out.map((short, i) => {
    const others = alike(i);
    if (!others.length) return short;
    const id = ids[i]!;
    const same = (a: string, b: string, step: (k: number) => [string | undefined, string | undefined]) => {
      let k = 0;
      while (k < Math.min(a.length, b.length) && step(k)[0] === step(k)[1]) k++;
      return k;
    };
    const head = Math.min(...others.map((o) => same(id, o, (k) => [id[k], o[k]])));
    const tail = Math.min(...others.map((o) => same(id, o, (k) => [id[id.length - 1 - k], o[o.length - 1 - k]])));
    const table = id.indexOf('/') + 1;
    // A few characters either side of where they differ, to read it by, as many as fit after the table.
    const from = Math.max(table, head - 4);
    const to = Math.min(id.length, Math.max(head + 1, id.length - tail + 4), Math.max(head + 1, from + max - table - 2));
    return `${id.slice(0, table)}${from > table ? ELLIPSIS : ''}${id.slice(from, to)}${to < id.length ? ELLIPSIS : ''}`;
  });
  return apart.map((a, i) => (apart.some((b, j) => b === a && ids[j] !== ids[i]) ? ids[i]! : a));
}

/** The cursor in words; `short` keeps what tells partitions apart (the block, the newest point). */
export function cursorText(c: Cursor, short: boolean): string {
  if (c.window) {
    const listings = listingsOf(c.window);
    const top = highest(listings.map((l) => l.top))?.block;
    const from = 'chunks' in c.window ? c.window.start : (c.window.query.startBlock ?? 0);
    const newest = top !== undefined ? `, newest block committed ${top}` : '';
    if (!('chunks' in c.window) || listings.length === 1) {
      if (short) return `paging, ${top !== undefined ? `at block ${top}` : `from block ${from}`}`;
      return `paging from block ${from}${newest}`;
    }
    const done = listings.filter((l) => l.done).length;
    const ranges = `${done} of ${listings.length} ranges done, ${listings.length - done} in flight`;
    if (short) return `paging, ${ranges}`;
    return `paging blocks ${from} to ${c.window.end! - 1}: ${ranges} (${c.window.splits} split off)${newest}`;
  }
  if (c.nextBlock !== undefined) {
    const kept = c.skip?.keys.length;
    return `next block ${c.nextBlock}${kept && !short ? ` (${kept} of its rows committed)` : ''}`;
  }
  if (c.newest !== undefined) return `newest ${short ? '' : 'point '}${minute(c.newest * 1000)}`;
  if (c.refreshedAt) return `fetched ${short ? minute(Date.parse(c.refreshedAt)).slice(5) : minute(Date.parse(c.refreshedAt))}`;
  return '-';
}

function lastRunText(s: PartitionState, short: boolean): string {
  if (!s.lastRun) return '-';
  const at = minute(Date.parse(s.lastRun.at));
  // A complete run is the usual case: the short form names only a partial one.
  return short && s.lastRun.status === 'complete' ? at : `${at} ${s.lastRun.status}`;
}

/** A partition's data files: what its rows are read from (its raw pages and rejects not counted). */
function dataFiles(s: PartitionState): number {
  return s.files.filter((f) => isTableData(s.table, f)).length;
}

/**
 * The partitions as a text table of at most `width` columns (as far as ids can shrink); a cursor
 * past what exists is marked `!` and said whole under the table.
 */
export function statusTable(states: PartitionState[], width: number, nowSeconds = Math.floor(Date.now() / 1000)): string {
  const problems = states.map((s) => cursorProblem(s, nowSeconds));
  // Rejects are a column only when there are any.
  const rejects = states.some((s) => s.rejects > 0 || (s.rebuild?.rejects ?? 0) > 0);
  // Files: its data files, as `compact` counts them (its raw pages and rejects are files too; --format json says each).
  const header = ['partition', 'cursor', 'rows', ...(rejects ? ['rejects'] : []), 'files', 'last run (UTC)'];
  const build = (short: boolean, idWidth = Infinity, cursorWidth = Infinity) => {
    // Partitions may be named by what a service listed: inert before measuring, then shortened.
    const ids = shortenIds(states.map((s) => inert(`${s.table}/${s.partition}`)), idWidth);
    return states.map((s, i) => {
      const rebuilding = s.rebuild ? (short ? ' +rebuild' : ` (full refresh in progress: ${s.rebuild.rows} rows)`) : '';
      const cursor = inert((problems[i] ? '! ' : '') + cursorText(s.cursor, short) + rebuilding);
      return [
        ids[i]!,
        cursor.length > cursorWidth ? cursor.slice(0, cursorWidth - 1) + ELLIPSIS : cursor,
        s.rows,
        ...(rejects ? [s.rejects] : []),
        dataFiles(s),
        inert(lastRunText(s, short)),
      ];
    });
  };
  const widest = (rows: Array<Array<string | number>>, i: number) => Math.max(header[i]!.length, ...rows.map((r) => String(r[i]).length));
  const fits = (rows: Array<Array<string | number>>) => header.reduce((n, _, i) => n + widest(rows, i), 0) + 2 * (header.length - 1) <= width;
  let rows = build(false);
  if (!fits(rows)) rows = build(true);
  if (!fits(rows)) {
    // What the other columns leave goes to the ids first; the cursor keeps what it needs if it can.
    const rest = width - 2 * (header.length - 1) - header.slice(2).reduce((n, _, i) => n + widest(rows, i + 2), 0);
    const cursorWidth = Math.min(widest(rows, 1), Math.max(12, rest - 20));
    rows = build(true, Math.max(20, rest - cursorWidth), cursorWidth);
  }
  const said = states.flatMap((s, i) => (problems[i] ? [inert(`  ${s.table}/${s.partition}: ${problems[i]}`)] : []));
  return [textTable(header, rows), ...(said.length ? ['', `! ${said.length === 1 ? 'a cursor' : `${said.length} cursors`} past what exists (the next runs fetch nothing there):`, ...said] : [])].join('\n');
}

/**
 * Every partition whole: full ids, the cursor as stored, counts and the last run; but each string
 * bounded (text.ts): a cursor keeps the page token a service chose, which may be megabytes.
 */
export function statusJson(lake: string, states: PartitionState[], nowSeconds = Math.floor(Date.now() / 1000)): object {
  return {
    lake,
    partitions: states.map((s) => {
      const problem = cursorProblem(s, nowSeconds);
      return boundedAll({
        table: s.table,
        partition: s.partition,
        ...(s.values ? { values: s.values } : {}),
        cursor: s.cursor,
        // Where the range the partition fetched begins (a block, or a series' first time).
        ...(s.from !== undefined ? { from: s.from } : {}),
        rows: s.rows,
        rejects: s.rejects,
        files: s.files.length,
        dataFiles: dataFiles(s),
        rawFiles: s.files.filter((f) => f.startsWith(`${RAW}/`)).length,
        lastRun: s.lastRun ?? null,
        ...(s.head ? { head: s.head } : {}),
        ...(problem ? { problem } : {}),
        ...(s.rebuild ? { rebuild: { cursor: s.rebuild.cursor, rows: s.rebuild.rows, rejects: s.rebuild.rejects, files: s.rebuild.files.length } } : {}),
      });
    }),
  };
}
