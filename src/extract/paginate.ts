// The generic paginator over nextPageToken/pageToken (or the metrics service's legacy
// nextPageStartKey, sent back the same way). Stop rules: no token means the last page; a token
// seen twice in one partition is a loop (error, see LoopGuard); an empty page that still carries a
// token is followed, up to `maxEmptyPages` in a row; a page larger than the page size asked is an
// error. Rows sent again under a fresh token are the transform's to tell (transform/repeats.ts).
import { onBehalf, type ClientPort, type Page, type PaginateOptions } from '../decl/request.js';
import { RunError, ServiceError } from '../errors.js';
import { fromBytes } from '../bytes.js';
import { bounded, grouped } from '../text.js';

/**
 * A 400 to a request that carried a page token: the token expired (metrics tokens live 24 h) or is
 * unknown. The caller restarts the listing from its first page.
 */
export class PageTokenError extends Error {
  constructor(readonly cause: ServiceError) {
    super(`page token refused: ${cause.message}`);
  }
}

/**
 * The token of the page after this body; undefined when it is the last page. The metrics
 * service's legacy answers (avg_tps) carry `nextPageStartKey` instead (docs/services.md, Metrics
 * service): whichever the body has is followed, and goes back as `pageToken`, the only paging
 * parameter the service takes.
 */
export function nextToken(body: Record<string, unknown>): string | undefined {
  for (const t of [body.nextPageToken, body.nextPageStartKey]) if (typeof t === 'string' && t !== '') return t;
  return undefined;
}

/**
 * Tells whether a listing's page token came before, in bounded memory. The last `recent` tokens are
 * kept, so a loop of up to that many pages is caught at its first repeated token. A longer loop is
 * caught by Brent's cycle detection: one anchor token, compared with every new one, moved to the
 * newest token each time the steps since it reach a power of two; it is caught within about two
 * turns of the loop after it starts. Keeping every token held 50,000 of them in a 5M-row run on
 * the simulator (about 5 MB for tokens of ~70 characters; a real service's are longer), a heap
 * that grew with the length of the listing.
 */
export class LoopGuard {
  private readonly kept = new Set<string>();
  private anchor: string | undefined;
  private power = 1;
  private steps = 0;

  constructor(private readonly recent = 1024) {}

  /** Tokens held (at most `recent` + 1). */
  get held(): number {
    return this.kept.size + (this.anchor === undefined ? 0 : 1);
  }

  /** Whether `token` came before; remembers it otherwise. */
  repeated(token: string): boolean {
    if (token === this.anchor || this.kept.has(token)) return true;
    this.kept.add(token);
    // A Set iterates in insertion order: the first is the oldest.
    if (this.kept.size > this.recent) this.kept.delete(this.kept.values().next().value as string);
    if (++this.steps === this.power) {
      this.anchor = token;
      this.power *= 2;
      this.steps = 0;
    }
    return false;
  }
}

/**
 * The page size asked, when a page holds more items than that (a service that does not honour it
 * may page by offsets of its own: what the next token skips is unknown). Undefined when the page
 * is within it, or nothing was asked (an endpoint without a page size, or 0: the service's own).
 */
/**
 * The longest page token followed. A token goes back in the query string, and production's
 * servers refuse a request line much past 8 KiB; a longer one would also be kept whole in the
 * partition's state. A listing whose service sends one fails its partition before the page is
 * committed, so the cursor never holds it.
 */
export const MAX_PAGE_TOKEN = 8192;

export function oversized(items: number, pageSize: string | undefined): number | undefined {
  const asked = Number(pageSize);
  return pageSize !== undefined && Number.isInteger(asked) && asked > 0 && items > asked ? asked : undefined;
}

export async function* paginate(client: Pick<ClientPort, 'get'>, o: PaginateOptions): AsyncGenerator<Page> {
  const guard = new LoopGuard();
  let token = o.startToken;
  let empty = 0;
  const maxEmpty = o.maxEmptyPages ?? 20;
  for (;;) {
    if (token !== undefined) {
      if (guard.repeated(token)) throw new RunError(`${o.endpoint}: the service sent page token ${JSON.stringify(bounded(token, 80))} twice in one listing (loop); stopping this partition`);
    }
    const query = token === undefined ? o.query : { ...o.query, pageToken: token };
    let body: unknown;
    let raw: Buffer | undefined;
    let bytes = false;
    try {
      body = await client.get(o.path, query, {
        ...onBehalf(o, o.endpoint, o.weight),
        bytes: o.bytes,
        onBody: (b, asBytes) => {
          raw = b;
          bytes = asBytes;
        },
      });
    } catch (err) {
      if (token !== undefined && err instanceof ServiceError && err.status === 400) throw new PageTokenError(err);
      throw err;
    }
    if (!body || typeof body !== 'object' || !Array.isArray((body as Record<string, unknown>)[o.items])) {
      throw new RunError(`${o.endpoint}: the answer has no "${o.items}" list (keys: ${body && typeof body === 'object' ? bounded(Object.keys(body).join(', ')) : typeof body})`);
    }
    const b = body as Record<string, unknown>;
    const items = b[o.items] as unknown[];
    const asked = oversized(items.length, query.pageSize);
    if (asked !== undefined) throw new RunError(`${o.endpoint}: the service sent a page of ${items.length} items where ${asked} were asked (pageSize); stopping this partition`);
    const nextRaw = nextToken(b);
    const next = nextRaw !== undefined && bytes ? fromBytes(nextRaw) : nextRaw;
    if (next !== undefined && next.length > MAX_PAGE_TOKEN) {
      throw new RunError(`${o.endpoint}: the service sent a page token of ${grouped(next.length)} characters, longer than the ${grouped(MAX_PAGE_TOKEN)} chainlake follows (${JSON.stringify(bounded(next, 80))}); stopping this partition`);
    }
    yield { items, token, next, raw, bytes };
    if (next === undefined) return;
    empty = items.length === 0 ? empty + 1 : 0;
    if (empty >= maxEmpty) throw new RunError(`${o.endpoint}: ${empty} empty pages in a row that still carry a page token; stopping this partition`);
    token = next;
  }
}
