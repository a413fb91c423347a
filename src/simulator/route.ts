// What a route is: the service it belongs to, what it costs, and its handler. The data and metrics
// routes (routes.ts) and the node's (node_routes.ts) are both written against these types, so
// neither has to import the other's file.
import type { Service } from './errors.js';
import type { SimOperations } from './operations.js';
import type { PageTokens } from './tokens.js';
import type { Caller, UsageLog } from './usage.js';
import type { World } from './world.js';

export interface RouteContext {
  world: World;
  tokens: PageTokens;
  params: readonly string[];
  query: URLSearchParams;
  /** The parsed JSON body of a POST (not for a route that reads its own body). */
  body?: unknown;
  /** The body as sent and its content type, for a route that reads its own body. */
  text: string;
  contentType?: string;
  operations: SimOperations;
  /** What the data service served each key (usage.ts). */
  usage: UsageLog;
  /** Who the key a data-service request carries is (never the key itself); none without a key. */
  caller?: Caller;
  /** The key avg_tps names its next page by (SimulatorOptions.avgTpsNextKey); default nextPageToken. */
  avgTpsNextKey?: AvgTpsNextKey;
}

/** The reference's avg_tps pages with nextPageToken; the metrics service's legacy response schema with nextPageStartKey. */
export type AvgTpsNextKey = 'nextPageToken' | 'nextPageStartKey';

export interface Route {
  name: string;
  service: Service;
  /** compute units charged per request */
  weight: number;
  /** default GET */
  method?: 'POST';
  /** The handler checks the content type and parses the body itself (the node answers those in its own way). */
  ownBody?: boolean;
  /** status of a success; default 200 */
  status?: number;
  handle(ctx: RouteContext): unknown;
}

/** Path pattern: literal segments, or null for a parameter. */
export type RouteTable = Array<{ pattern: Array<string | null>; route: Route }>;
