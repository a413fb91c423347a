// Rows a listing sends again. Offset paging while rows arrive shifts a page by a row, so the next
// page repeats the last row of this one; a service that ignores the page token sends the same
// rows under a fresh token forever (measured: 49,757 requests in 40 s, 99,512 rows committed, 2
// distinct). The keys of a listing's recent pages tell a row sent again; a page that brings no row
// the listing has not sent is a loop. Only recent pages are kept: a listing runs to millions of
// rows, and a page repeats what came just before it, not what came an hour ago.
import { createHash } from 'node:crypto';
import { stringifyExact } from '../json.js';

/** What becomes of one page's rows. */
export interface Sifted {
  /** Per row, in the page's order: new to the listing (true) or sent again (false). */
  keep: boolean[];
  fresh: number;
  twice: number;
  /** Rows came, none of them new: the listing is going round (or the page is an overlap only). */
  nothingNew: boolean;
}

/** Default bounds: a few pages, and at most this many keys whatever the page size. */
export const RECENT_PAGES = 4;
export const RECENT_KEYS = 20_000;

export class RecentRows {
  /** Oldest first. A page's digest stands for its items as sent, where keys cannot (see `repeats`). */
  private readonly pages: Array<{ keys: Set<string>; digest?: string }> = [];
  private count = 0;

  constructor(
    private readonly maxPages = RECENT_PAGES,
    private readonly maxKeys = RECENT_KEYS,
  ) {}

  /** Keys held (bounded by maxKeys, or by one page when a single page holds more). */
  get held(): number {
    return this.count;
  }

  private has(key: string): boolean {
    for (const p of this.pages) if (p.keys.has(key)) return true;
    return false;
  }

  /**
   * Whether a page with these very items (its digest) came among the recent ones. For rows whose
   * key counts identical siblings (internal transactions), a page sent again gets new keys: only
   * its content tells it.
   */
  repeats(digest: string): boolean {
    return this.pages.some((p) => p.digest === digest);
  }

  /**
   * Which rows of a page are new, by key (a key twice within the page is sent again too), and
   * remembers the new ones as the newest page. A page with nothing new is not remembered: it
   * changes nothing, so the caller may drop it whole.
   */
  sift(keys: string[], digest?: string): Sifted {
    const page = new Set<string>();
    const keep = keys.map((k) => {
      if (page.has(k) || this.has(k)) return false;
      page.add(k);
      return true;
    });
    const fresh = page.size;
    const twice = keys.length - fresh;
    const nothingNew = keys.length > 0 && fresh === 0;
    if (!nothingNew && keys.length > 0) this.remember(page, digest);
    return { keep, fresh, twice, nothingNew };
  }

  private remember(keys: Set<string>, digest: string | undefined): void {
    this.pages.push({ keys, digest });
    this.count += keys.size;
    // The newest page always stays: the next page's overlap is with it.
    while (this.pages.length > 1 && (this.pages.length > this.maxPages || this.count > this.maxKeys)) this.count -= this.pages.shift()!.keys.size;
  }

  /** A new listing (a restart, the next window): nothing it sends is a repeat of the last one. */
  clear(): void {
    this.pages.length = 0;
    this.count = 0;
  }
}

/** The digest of a page's items as parsed (numbers kept exact stay as sent). */
export function pageDigest(items: unknown[]): string {
  return createHash('sha256').update(stringifyExact(items) ?? '').digest('base64');
}
