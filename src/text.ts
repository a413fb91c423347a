// Text that came from a service, shown to a person. A terminal acts on some characters instead of
// showing them: an escape sequence can retitle the window (OSC 0), write the clipboard (OSC 52),
// erase the line (CSI 2K) or fake a coloured "done", and bidi overrides make text read otherwise
// than it is stored. Such text is escaped where it is printed, never where it is stored: the lake
// keeps what was sent. And a CSV cell that a spreadsheet would run as a formula gets a quote.

/** Beyond C0, what a terminal acts on and JSON.stringify leaves as it is: DEL, C1, bidi, lone surrogates. */
const BEYOND_C0 = String.raw`[\u007f-\u009f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]`;
/**
 * C0, DEL, C1 (U+009B is CSI on some terminals), the bidi embeddings, overrides and isolates, and
 * surrogates without their other half.
 */
const ACTIVE = new RegExp(String.raw`[\u0000-\u001f]|${BEYOND_C0}`, 'g');

function escape(c: string): string {
  const code = c.charCodeAt(0);
  return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `s` with every character a terminal would act on written as a visible escape (`\x1b`,
 * `\u009b`, `\u202e`). `lines`: keep newlines and tabs, for text that is legitimately several
 * lines (a list of problems, a stack); a caller printing one line leaves it off, so that nothing
 * can start a line of its own that looks like ours.
 */
export function inert(s: string, o: { lines?: boolean } = {}): string {
  return s.replace(ACTIVE, (c) => (o.lines && (c === '\n' || c === '\t') ? c : escape(c)));
}

/** A copy of plain data (objects, arrays) with `f` applied to every string in it, keys too. */
function eachString<T>(v: T, f: (s: string) => string): T {
  if (typeof v === 'string') return f(v) as T;
  if (Array.isArray(v)) return v.map((x: unknown) => eachString(x, f)) as T;
  if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype)
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [f(k), eachString(x, f)])) as T;
  return v;
}

/**
 * A copy of plain data (objects, arrays) with every string in it, keys too, made inert on one
 * line: for a structure that a formatter turns into text, so that each value stays on its line.
 */
export function inertAll<T>(v: T): T {
  return eachString(v, (s) => inert(s));
}

// A service may send a page token, a message, a field name or a header of megabytes (a fault or
// an attack): quoted whole, one error line would be megabytes on a terminal, in a log and in the
// run report. What is shown of service text is bounded here, and only here; the lake keeps what
// was sent. A secret is redacted before its text is cut, so a cut never leaves part of one.

/** Characters of one service string shown (a message, a URL with its page token, a header, a name). */
export const TEXT_CHARS = 2000;
/** Characters of one line or entry that quotes service text (an error, a log value, a report's error): a few strings. */
export const LINE_CHARS = 4 * TEXT_CHARS;

/** `n` with its thousands grouped: 4,194,304. */
export function grouped(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * `s` in at most `max` characters (a few dozen at least: the mark's room): as it is when it fits,
 * else its head and how long it was (`...…[cut: 4,194,304 chars]`). A surrogate pair is never split.
 */
export function bounded(s: string, max: number = TEXT_CHARS): string {
  if (s.length <= max) return s;
  const mark = `…[cut: ${grouped(s.length)} chars]`;
  let keep = Math.max(0, max - mark.length);
  const last = s.charCodeAt(keep - 1);
  if (last >= 0xd800 && last <= 0xdbff) keep--;
  return s.slice(0, keep) + mark;
}

/** A copy of plain data with every string in it, keys too, bounded to `max` characters. */
export function boundedAll<T>(v: T, max: number = TEXT_CHARS): T {
  return eachString(v, (s) => bounded(s, max));
}

/** Distinct names a tally of service names keeps (fields the declarations do not read); past it... */
export const MAX_NAMES = 100;
/** ...every other name counts under this one. */
export const OTHER_NAMES = '…[other names]';

/**
 * Adds the counts of `from` to `into` by name, each name bounded and at most MAX_NAMES of them:
 * a service that sends a million distinct field names makes one entry of the rest, not a million.
 */
export function addNames(into: Record<string, number>, from: Record<string, number>): void {
  let names = Object.keys(into).length;
  for (const [k, n] of Object.entries(from)) {
    let name = bounded(k);
    if (!Object.hasOwn(into, name)) {
      if (names >= MAX_NAMES) name = OTHER_NAMES;
      if (!Object.hasOwn(into, name)) names++;
    }
    const sum = (Object.hasOwn(into, name) ? into[name]! : 0) + n;
    // Assigned, `__proto__` would set the object's prototype: it is a field name like any other.
    if (name === '__proto__') Object.defineProperty(into, name, { value: sum, enumerable: true, writable: true, configurable: true });
    else into[name] = sum;
  }
}

const ACTIVE_IN_JSON = new RegExp(BEYOND_C0, 'g');

/**
 * JSON text with those characters written as `\u` escapes: the same value to a JSON reader, and
 * inert to a terminal (JSON.stringify already escapes C0). Only strings can hold them, so each
 * one is inside a string literal where an escape means the same character.
 */
export function inertJson(json: string): string {
  return json.replace(ACTIVE_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The first characters that make a spreadsheet read a cell as a formula, by OWASP's CSV injection
 * rule (owasp.org/www-community/attacks/CSV_Injection): `=`, `+`, `-`, `@`, tab and carriage
 * return. Written so that JavaScript and DuckDB (RE2) read it alike.
 */
export const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A text cell a spreadsheet shows as text, by the OWASP rule: one that begins with a formula
 * character gets a leading `'` (the CSV writer then quotes the cell as usual).
 */
export function csvSafe(cell: string): string {
  return FORMULA_START.test(cell) ? `'${cell}` : cell;
}

/** Unix seconds as an ISO time to the second (`2025-11-01T00:00:00Z`); undefined where no date is. */
export function isoTime(seconds: number): string | undefined {
  const ms = seconds * 1000;
  return Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString().replace('.000Z', 'Z') : undefined;
}

/**
 * The width of each of a table's columns: its longest cell. A loop, not Math.max(...cells): the
 * spread passes every cell as an argument, and ~120,000 of them overflow the stack.
 */
export function tableWidths(columns: number, rows: Iterable<readonly string[]>): number[] {
  const widths = new Array<number>(columns).fill(0);
  for (const r of rows) for (let i = 0; i < columns; i++) widths[i] = Math.max(widths[i]!, (r[i] ?? '').length);
  return widths;
}

/** One line of a fixed-width table: a cell wider than its column pushes the line out, it is never cut. */
export function tableLine(cells: readonly string[], widths: readonly number[], right: readonly boolean[] = []): string {
  return cells.map((c, i) => (right[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
}

/** The line under a table's header. */
export function tableRule(widths: readonly number[]): string {
  return widths.map((w) => '-'.repeat(w)).join('  ');
}

/** A fixed-width text table; columns of numbers (by the first row) are aligned right. */
export function textTable(header: string[], rows: Array<Array<string | number>>): string {
  const cells = rows.map((r) => r.map(String));
  const widths = tableWidths(header.length, [header, ...cells]);
  const right = header.map((_, i) => typeof rows[0]?.[i] === 'number');
  return [tableLine(header, widths, right), tableRule(widths), ...cells.map((r) => tableLine(r, widths, right))].join('\n');
}
