// Generic transform: a page of items -> columnar rows of a declaration, or rejects with reasons.
// Pure apart from the carry (state a derive function keeps across pages of one partition).
import type { DeriveContext, Partition, StreamDecl } from '../decl/stream.js';
import * as V from './values.js';
import { compileRows, type RowFunction, type RowScratch } from './compile.js';
import { fromBytes } from '../bytes.js';
import { stringifyExact } from '../json.js';
import { addNames } from '../text.js';
import type { Carry } from '../state/cursor.js';
import { pageDigest, RecentRows } from './repeats.js';
import { BELOW, getter, KEEP, OUTSIDE, SKIPPED, UNASKED, type RowGate, type Verdict } from './gate.js';

export { BELOW, getter, KEEP, OUTSIDE, SKIPPED, UNASKED, type RowGate, type Verdict };

export { FIELD, NULL, stageText, unstage } from './staging.js';

export interface Reject {
  reason: string;
  raw: string;
}

/** Rows staged as text lines (see FIELD), with what the transform counted on the way. */
export interface Batch {
  lines: string[];
  rows: number;
  rejects: Reject[];
  /** Amounts of more than 38 digits: exact in `_raw`, NULL in the DECIMAL column. */
  over38: number;
  /** Fields of items that no column reads (schema drift), with how often they came. */
  extraFields: Record<string, number>;
  /** Rows dropped because an earlier run committed them (the high-water block's keys). */
  skipped: number;
  /**
   * Rows dropped because the listing had sent them already (by key, among its recent pages), or
   * because their block lies outside the range the listing asked for (another listing sends them).
   */
  sentTwice: number;
  /**
   * Rows outside what the listing asked for or what can exist (above the window's end or the
   * chain's head, below its start, a time in the future): dropped, never committed, and the
   * first of them said (`outsideFirst`) so that a run can tell why.
   */
  outside: number;
  outsideFirst?: string;
}

/** What became of one page (Transformer.push). */
export interface PageOutcome {
  /** Rows new to the listing, and rows it had sent already (dropped, counted in the batch). */
  fresh: number;
  twice: number;
  /** The page brought rows and none was new: it was dropped whole, the batch as it was before it. */
  dropped: boolean;
}

/**
 * One item per element of the list at `path` of each item (of each path in turn, when several name
 * lists of one kind, such as a transaction's transfers of each token standard); the item itself is
 * kept under `_parent` and a scalar element under `_value`. An item without the list yields nothing
 * (it is counted only if the list is not a list).
 */
export function explode(items: unknown[], path: string | readonly string[], rejects: Reject[]): unknown[] {
  const paths = typeof path === 'string' ? [path] : path;
  const gets = paths.map((p) => [p, getter(p)] as const);
  const out: unknown[] = [];
  for (const item of items) {
    if (item === null || typeof item !== 'object') {
      out.push(item);
      continue;
    }
    for (const [p, get] of gets) {
      const list = get(item as Record<string, unknown>);
      if (list === undefined || list === null) continue;
      if (!Array.isArray(list)) {
        rejects.push({ reason: `${p}: expected a list`, raw: stringifyExact(item)! });
        continue;
      }
      for (const e of list) out.push(e !== null && typeof e === 'object' && !Array.isArray(e) ? { ...e, _parent: item } : { _value: e, _parent: item });
    }
  }
  return out;
}

/**
 * The fields a declaration reads, as a tree: `true` where a field is read whole (a JSON column, a
 * list), else the fields read inside it, with the path they sit at (`erc20Token.price.`). Any
 * other field, at the top or inside an object read in part, is drift. Fields chainlake adds itself
 * (`_snapshot`, `_chain`, `_parent`, ...) are whole.
 */
export interface KnownFields {
  prefix: string;
  fields: Map<string, KnownFields | true>;
}

export function knownFields(decl: StreamDecl): KnownFields {
  const root: KnownFields = { prefix: '', fields: new Map([['_parent', true], ['_value', true]]) };
  const add = (path: string) => {
    const parts = path.split('.');
    if (parts[0]!.startsWith('_')) parts.length = 1;
    let node = root;
    for (const [i, k] of parts.entries()) {
      const at = node.fields.get(k);
      if (at === true) return;
      if (i === parts.length - 1) node.fields.set(k, true);
      else {
        const next: KnownFields = at ?? { prefix: `${node.prefix}${k}.`, fields: new Map() };
        node.fields.set(k, next);
        node = next;
      }
    }
  };
  for (const f of decl.knownFields ?? []) add(f);
  for (const c of decl.columns) for (const p of c.from === undefined ? [] : Array.isArray(c.from) ? c.from : [c.from]) add(p);
  return root;
}



export class Transformer {
  private readonly row: RowFunction;
  private readonly scratch: RowScratch = { block: 0, time: NaN, key: '', over: 0 };
  private batch!: Batch;
  private carry: Carry;
  private readonly ctx: DeriveContext;
  private readonly known: KnownFields;
  /** Keys of the listing's recent pages: a row sent again is dropped. */
  private readonly recent = new RecentRows();
  /** A derive function counts identical siblings through the carry (ctx.seen). */
  private usesCarry = false;
  /** Which rows of a listing with a block or time cursor it keeps; none: every row. */
  gate?: RowGate;

  /** Counts fields no column reads (Batch.extraFields); off where no report says them. */
  private readonly countDrift: boolean;

  constructor(
    readonly decl: StreamDecl,
    partition: Partition,
    carry: Carry = {},
    gate?: RowGate,
    o: { drift?: boolean } = {},
  ) {
    this.gate = gate;
    this.countDrift = o.drift ?? true;
    this.carry = structuredClone(carry);
    this.ctx = {
      seen: (group, key) => {
        this.usesCarry = true;
        // State carried across pages keeps real text, whichever form a page came in.
        if (this.bytes) {
          group = fromBytes(group);
          key = fromBytes(key);
        }
        if (this.carry.group !== group) this.carry = { group, seen: {} };
        const n = this.carry.seen![key] ?? 0;
        this.carry.seen![key] = n + 1;
        return n;
      },
    };
    this.row = compileRows(decl, partition.values);
    this.known = knownFields(decl);
    this.reset();
  }

  private reset(): void {
    this.batch = { lines: [], rows: 0, rejects: [], over38: 0, extraFields: {}, skipped: 0, sentTwice: 0, outside: 0 };
  }

  /** Another listing's pages follow: none of its rows is a repeat of this one's. */
  newListing(): void {
    this.recent.clear();
  }

  /** The carry starts afresh and no earlier page is a repeat: another listing (a window, a chunk) follows. */
  endListing(): void {
    this.carry = {};
    this.newListing();
  }

  get rows(): number {
    return this.batch.rows;
  }

  getCarry(): Carry {
    return structuredClone(this.carry);
  }

  /** The page being transformed came as UTF-8 bytes in a one-byte string (src/bytes.ts). */
  private bytes = false;

  /**
   * Transforms the items of one page into the current batch. `bytes`: the page was parsed from its
   * UTF-8 bytes as a one-byte string (replay of a `bytesSafe` stream); its staged lines are then
   * bytes too, to be written as latin1.
   *
   * Rows the listing sent already (by key, among its recent pages) are dropped and counted. A page
   * that brings no new row leaves the batch, the carry and the high-water keys as they were (see
   * PageOutcome): the caller decides whether that ends the listing in error.
   */
  push(items: unknown[], bytes = false): PageOutcome {
    this.bytes = bytes;
    try {
      return this.transform(items, bytes);
    } finally {
      this.bytes = false;
    }
  }

  private transform(items: unknown[], bytes: boolean): PageOutcome {
    // A page sent again identically would give the rows that count identical siblings new keys
    // (the carry moves on): its content tells it. Hashed only for streams that use the carry.
    let digest = this.usesCarry && items.length > 0 ? pageDigest(items) : undefined;
    if (digest !== undefined && this.recent.repeats(digest)) {
      this.batch.sentTwice += items.length;
      return { fresh: 0, twice: items.length, dropped: true };
    }
    const before = this.carry.group === undefined ? {} : structuredClone(this.carry);
    // Rejects and drift wait for the end of the page: a page with nothing new leaves no trace. A
    // row sent again changes nothing, so such a page has reached nothing else of the batch.
    const rejects: Reject[] = [];
    const extra: Record<string, number> = {};
    const page = items;
    if (this.decl.explode) items = explode(items, this.decl.explode, rejects);
    const batch = this.batch;
    const s = this.scratch;
    const gate = this.gate;
    const keyed = this.decl.key.length > 0;
    for (const item of items) {
      if (item === null || typeof item !== 'object' || Array.isArray(item)) {
        rejects.push({ reason: 'item is not an object', raw: stringifyExact(item) ?? 'undefined' });
        continue;
      }
      if (this.countDrift) this.drift(item as Record<string, unknown>, this.known, extra);
      s.over = 0;
      const line = this.row(item as Record<string, unknown>, s, this.ctx);
      if (line instanceof V.Bad) {
        rejects.push({ reason: line.reason, raw: stringifyExact(item)! });
        continue;
      }
      const key = bytes ? fromBytes(s.key) : s.key;
      if (keyed && !this.recent.admit(key)) continue;
      if (gate) {
        const v = gate.admit(s.block, key, s.time);
        if (v !== KEEP) {
          if (v === OUTSIDE) batch.sentTwice++;
          else if (v === SKIPPED) batch.skipped++;
          else if (v === UNASKED) {
            batch.outside++;
            batch.outsideFirst ??= gate.unasked;
          }
          continue;
        }
      }
      batch.lines.push(line);
      batch.rows++;
      batch.over38 += s.over;
    }
    // The page as sent (before explode), as its digest was taken above when the carry was known in use.
    if (digest === undefined && this.usesCarry && page.length > 0) digest = pageDigest(page);
    const sifted = this.recent.endPage(digest);
    batch.sentTwice += sifted.twice;
    if (sifted.nothingNew) {
      this.carry = before;
      return { fresh: 0, twice: sifted.twice, dropped: true };
    }
    for (const r of rejects) batch.rejects.push(bytes ? { reason: fromBytes(r.reason), raw: fromBytes(r.raw) } : r);
    addNames(batch.extraFields, extra);
    return { fresh: sifted.fresh, twice: sifted.twice, dropped: false };
  }

  /** Counts the fields of `obj` that `known` does not read, and those inside objects it reads in part, into `into`. */
  private drift(obj: Record<string, unknown>, known: KnownFields, into: Record<string, number>): void {
    for (const k in obj) {
      const sub = known.fields.get(k);
      if (sub === true) continue;
      if (sub === undefined) {
        const name = this.bytes ? fromBytes(known.prefix + k) : known.prefix + k;
        into[name] = (into[name] ?? 0) + 1;
        continue;
      }
      const v = obj[k];
      // Plain objects only: a list, or a number kept exact (an object too), is a value.
      if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) this.drift(v as Record<string, unknown>, sub, into);
    }
  }

  /** Hands over the staged lines so far (to spool them); the counts stay with the batch. */
  takeLines(): string[] {
    const lines = this.batch.lines;
    this.batch.lines = [];
    return lines;
  }

  /** Hands over the rows so far and starts a new batch. */
  take(): Batch {
    const b = this.batch;
    this.reset();
    return b;
  }
}
