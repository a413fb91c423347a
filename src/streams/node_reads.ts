// What the streams of the node source share: JSON-RPC calls on behalf of a partition, the
// snapshot stamp (when, and which node), blockchain aliases resolved to ids, and the node's
// RFC 3339 times read as Unix seconds.
import { isBlockchainId } from '../ids.js';
import { RunError, ServiceError, Skipped } from '../errors.js';
import type { Page } from '../decl/request.js';
import { isMissingMethod, rpc } from '../sources/jsonrpc.js';
import { stamped } from './chain_reads.js';
import type { Column, ExtractContext, OptionSpec, Partition, StreamConfig, StreamDecl } from '../decl/stream.js';

/** One JSON-RPC call at `path` (e.g. /ext/info) on behalf of the partition. */
export function call(x: ExtractContext, path: string, method: string, params: unknown = {}): Promise<unknown> {
  return rpc(x.client, path, method, params, x);
}

/** The admin API: off unless the node runs with --api-admin-enabled=true. */
export const ADMIN = '/ext/admin';

/**
 * One call to the admin API. A node without it answers 404 at /ext/admin (or, behind a server
 * that knows no such method, a JSON-RPC error saying so): the partition is skipped with the reason,
 * not failed.
 */
export async function adminCall(x: ExtractContext, method: string, params: unknown = {}): Promise<unknown> {
  try {
    return await call(x, ADMIN, method, params);
  } catch (err) {
    if (err instanceof ServiceError && err.status === 404) {
      throw new Skipped(`the node does not serve the admin API (POST ${ADMIN} answered 404; it is off unless the node runs with --api-admin-enabled=true)`);
    }
    if (isMissingMethod(err)) throw new Skipped(`the node does not serve ${method} (${err.rpcMessage})`);
    throw err;
  }
}

/** A result that must be an object (the fields of a method's answer). */
export function fields(v: unknown, what: string): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new RunError(`${what}: the result is not an object`);
  return v as Record<string, unknown>;
}

export interface NodeSnapshot {
  /** Unix seconds */
  takenAt: number;
  nodeUrl: string;
}

/** The node's url without user or password, which must never land in the lake. */
function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/+$/, '');
  } catch {
    return url;
  }
}

/** Taken before the first call: every row of a partition's fetch carries the same stamp. */
export function nodeSnapshot(x: ExtractContext): NodeSnapshot {
  return { takenAt: Math.floor(Date.now() / 1000), nodeUrl: shownUrl(x.client.baseUrl) };
}

export { stamped };

export const NODE_SNAPSHOT_COLUMNS: Column[] = [
  { name: 'node_url', type: 'varchar', from: '_snapshot.nodeUrl', required: true, doc: 'the node asked (the `node` source url)' },
  { name: 'snapshot_at', type: 'timestamptz', from: '_snapshot.takenAt', required: true, stamp: true, doc: 'when chainlake took the snapshot (UTC)' },
];

export const SNAPSHOT_KEY_DOC = 'a snapshot of the node per run: each run adds one; a run within the same second replaces it';

/** What every snapshot stream of the node shares. */
export const NODE_SNAPSHOT = {
  service: 'node',
  weight: 1,
  exactNumbers: true,
  pageSize: { min: 0, max: 0, default: 0 },
  refresh: 'merge',
  mergeScope: 'partition',
} satisfies Partial<StreamDecl>;

/** The node has a single partition for node-wide state. */
export function nodePartition(id: string): Partition[] {
  return [{ id, path: {}, query: {}, values: {} }];
}

export const BLOCKCHAIN_IDS_OPTION: OptionSpec = {
  kind: 'blockchain_id[]',
  required: true,
  doc: 'blockchain ids (cb58) or the aliases P, X, C; one partition each',
};

/** One partition per blockchain, as given (id or alias). */
export function chainPartitions(s: StreamConfig, fallback?: string[]): Partition[] {
  const chains = (s.blockchainIds as string[] | undefined) ?? fallback ?? [];
  return chains.map((chain) => ({ id: chain, path: { chain }, query: {}, values: { chain } }));
}

/** The EVM RPC of a chain (its eth_* methods take their params as an array). */
export function rpcPath(chain: string): string {
  return `/ext/bc/${encodeURIComponent(chain)}/rpc`;
}

/** A blockchain id as given, or the id the node has for an alias (X -> 2oYMBN...). */
export async function blockchainIdOf(x: ExtractContext, chain: string): Promise<string> {
  if (isBlockchainId(chain)) return chain;
  const r = fields(await call(x, '/ext/info', 'info.getBlockchainID', { alias: chain }), 'info.getBlockchainID');
  if (!isBlockchainId(r.blockchainID)) throw new RunError(`info.getBlockchainID: ${JSON.stringify(r.blockchainID)} for alias ${chain} is not a blockchain id`);
  return r.blockchainID as string;
}

export const BLOCKCHAIN_ID_COLUMN: Column = { name: 'blockchain_id', type: 'varchar', from: '_chain', required: true, doc: 'blockchain id (cb58; an alias in the pipeline is resolved with info.getBlockchainID)' };

/** What the snapshot streams of a chain (validators, fee config, chain config, rules) share. */
export const CHAIN_SNAPSHOT = {
  ...NODE_SNAPSHOT,
  partitions: (s: StreamConfig) => chainPartitions(s),
  keyDoc: SNAPSHOT_KEY_DOC,
} satisfies Partial<StreamDecl>;

export const CHAIN_SNAPSHOT_COLUMNS: Column[] = [...NODE_SNAPSHOT_COLUMNS, BLOCKCHAIN_ID_COLUMN];

/** Items stamped with the blockchain id they are of (read by BLOCKCHAIN_ID_COLUMN). */
export function ofChain(items: unknown[], chainId: string): unknown[] {
  return items.map((i) => (i !== null && typeof i === 'object' && !Array.isArray(i) ? { ...i, _chain: chainId } : i));
}

/**
 * The extractor of a snapshot per chain: one page of what `fetch` asks the chain, stamped with the
 * snapshot and the chain's id.
 */
export function chainSnapshot(fetch: (x: ExtractContext, chain: string) => Promise<unknown[]>): (x: ExtractContext) => AsyncGenerator<Page> {
  return async function* (x) {
    const snap = nodeSnapshot(x);
    const chain = x.partition.path.chain!;
    const [id, items] = await Promise.all([blockchainIdOf(x, chain), fetch(x, chain)]);
    yield { items: stamped(ofChain(items, id), snap) };
  };
}

const RFC3339 = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/** Go's zero time, which the node writes for a time it does not have (a health check not yet run). */
export const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

/**
 * An RFC 3339 time (the node sends nanoseconds) as Unix seconds, the form TIMESTAMPTZ columns
 * land from; the fraction of the second is dropped. Go's zero time is no time (NULL). Anything
 * else is passed on to be rejected.
 */
export function isoSeconds(v: unknown): unknown {
  if (v === GO_ZERO_TIME) return undefined;
  if (typeof v !== 'string') return v;
  const m = RFC3339.exec(v);
  if (!m) return v;
  const ms = Date.parse(m[1]! + m[2]!);
  return Number.isFinite(ms) && ms >= 0 ? Math.floor(ms / 1000) : v;
}

/** A time column read from a top-level RFC 3339 field (which the item's knownFields must list). */
export function timeColumn(name: string, field: string, doc: string): Column {
  return { name, type: 'timestamptz', derive: (i) => isoSeconds(i[field]), doc: `${doc} (UTC, to the second)` };
}
