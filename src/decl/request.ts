// What a declaration's extractor asks of the services, and what it yields: the client as a port
// (sources/client.ts implements it), the options of one request, a listing's options, and the page.
// Nothing here depends on how requests are sent, so declarations sit below the sources.
import type { Exactness } from '../json.js';

/** Counters one stream keeps of its requests (the run report prints them). */
export interface RequestStats {
  requests: number;
  retries: number;
  status429: number;
  faults: Record<string, number>;
}

export function newRequestStats(): RequestStats {
  return { requests: 0, retries: 0, status429: 0, faults: {} };
}

/**
 * A request made on behalf of a partition (or a command): how messages name it, where it is
 * counted, what stops it, and how the service's budget is charged. The client's options, a
 * listing's and an extractor's context all carry these the same way.
 */
export interface RequestContext {
  /** Names the endpoint in messages (the route template, e.g. /v1/chains/{chainId}/...). */
  endpoint: string;
  stats: RequestStats;
  signal?: AbortSignal;
  /** Compute units the service charges for one request (the stream declaration's weight); default 1. */
  weight?: number;
  /** The listing the request belongs to, for fair shares of the budget; default: the path and query without the page token. */
  flow?: string;
  /** Parse the answer keeping the text of numbers a double would change (StreamDecl.exactNumbers). */
  exact?: Exactness;
}

/** Another request on behalf of the same partition: counted, stopped, shared and parsed as `x`'s, named `endpoint`. */
export function onBehalf(x: Pick<RequestContext, 'stats' | 'signal' | 'flow' | 'exact'>, endpoint: string, weight?: number): RequestContext {
  return { endpoint, stats: x.stats, signal: x.signal, weight, flow: x.flow, exact: x.exact };
}

export interface GetOptions extends RequestContext {
  /**
   * Receives the body of the answer that succeeded, as sent (raw pages are kept so), and whether
   * it was parsed as bytes (see `bytes`).
   */
  onBody?: (body: Buffer, asBytes: boolean) => void;
  /**
   * Parse a successful body from its bytes, one char per byte, when it allows it (`bytesParsable`
   * in src/bytes.ts): for the pages of a `bytesSafe` stream, which V8 then parses about
   * twice as fast. Error bodies are always text.
   */
  bytes?: boolean;
  /** Statuses (>= 400) whose body is data, not an error: a node's health answers 503 when unhealthy. */
  acceptStatus?: number[];
  /**
   * Whether the body of an accepted status is that data; when not, the status is the error it
   * would otherwise be (a proxy's 503 page is no health report, and is retried).
   */
  acceptBody?: (body: unknown) => boolean;
  /** Receives the status of the answer that succeeded (which of the accepted ones it was). */
  onStatus?: (status: number) => void;
}

export interface PostOptions extends GetOptions {
  /** Retry the POST on 5xx, timeouts and resets: only for calls that change nothing (JSON-RPC reads). */
  idempotent: boolean;
}

/** A service's client as extractors, the paginator and commands call it. */
export interface ClientPort {
  get(path: string, query: Record<string, string>, o: GetOptions): Promise<unknown>;
  post(path: string, body: unknown, o: PostOptions): Promise<unknown>;
  /** What node snapshots are stamped with. */
  readonly baseUrl: string;
  /** The asset chain's JSON-RPC namespace when the pipeline pins it (`sources.node.assetNamespace`). */
  readonly assetNamespace?: AssetNamespace;
  /** How many more requests the service could have under way (a listing may be split while above 0). */
  room?(): number;
  /** Counts a listing toward `room` until the returned function is called. */
  openListing?(): () => void;
}

/** The asset chain's method prefix: AvalancheGo registers `avm`, the reference names it `xvm`. */
export type AssetNamespace = 'avm' | 'xvm';
export const ASSET_NAMESPACES: readonly AssetNamespace[] = ['avm', 'xvm'];

export interface Page {
  items: unknown[];
  /** The token that fetched this page (undefined for the first). */
  token?: string;
  /** The token of the next page; undefined on the last page. */
  next?: string;
  /** The answer's body as sent, when one request made the page (kept as a raw page). */
  raw?: Buffer;
  /** The items were parsed from the body's bytes, one char per byte (PaginateOptions.bytes). */
  bytes?: boolean;
}

/** A listing: its request, paged by nextPageToken (extract/paginate.ts). */
export interface PaginateOptions extends RequestContext {
  path: string;
  query: Record<string, string>;
  /** Key of the item array in a page. */
  items: string;
  /** Continue from this token (a checkpoint) instead of the first page. */
  startToken?: string;
  maxEmptyPages?: number;
  /** Parse pages as UTF-8 bytes where they allow it (a `bytesSafe` stream; GetOptions.bytes). */
  bytes?: boolean;
}
