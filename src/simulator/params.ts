// Query and path parameters as the services check them (every 400 names its parameter), and
// paging by token: shared by every route table of the simulator.
import { NETWORKS, isBlockchainId, isEvmAddress, isEvmChainId, nodeIdProblem, primaryAddressProblem, type Network } from '../ids.js';
import { badRequest, notFound } from './errors.js';
import type { ChainInfo } from './evm.js';
import type { Listing } from './listing.js';
import type { RouteContext } from './route.js';
import type { TokenState } from './tokens.js';
import type { World } from './world.js';

export function single(q: URLSearchParams, name: string): string | undefined {
  const all = q.getAll(name);
  if (all.length > 1) throw badRequest(`${name} must be given at most once`);
  return all[0];
}

export function intParam(q: URLSearchParams, name: string, min: number, max?: number, def?: number): number | undefined {
  const raw = single(q, name);
  if (raw === undefined) return def;
  if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw badRequest(`${name} must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min) throw badRequest(`${name} must not be less than ${min}`);
  if (max !== undefined && n > max) throw badRequest(`${name} must not be greater than ${max}`);
  return n;
}

export function enumParam<T extends string>(q: URLSearchParams, name: string, values: readonly T[]): T | undefined {
  const raw = single(q, name);
  if (raw === undefined) return undefined;
  if (!(values as readonly string[]).includes(raw)) throw badRequest(`${name} must be one of: ${values.join(', ')}`);
  return raw as T;
}

export function listParam(q: URLSearchParams, name: string): string[] | undefined {
  const raw = single(q, name);
  if (raw === undefined) return undefined;
  const items = raw.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw badRequest(`${name} must be a comma-separated list without empty entries`);
  return items;
}

export function networkParam(raw: string): Network {
  if (!(NETWORKS as readonly string[]).includes(raw)) throw badRequest(`network must be one of: ${NETWORKS.join(', ')}`);
  return raw as Network;
}

export function addressesParam(q: URLSearchParams, name: string, network: Network): string[] | undefined {
  const list = listParam(q, name);
  for (const a of list ?? []) {
    const problem = primaryAddressProblem(a, network);
    if (problem) throw badRequest(`${name}: "${a}" ${problem}`);
  }
  return list;
}

export function nodeIdsParam(q: URLSearchParams): string[] | undefined {
  const list = listParam(q, 'nodeIds');
  for (const n of list ?? []) {
    const problem = nodeIdProblem(n);
    if (problem) throw badRequest(`nodeIds: "${n}" ${problem}`);
  }
  return list;
}

export function dataChain(ctx: RouteContext, raw: string): ChainInfo {
  if (!isEvmChainId(raw) && !isBlockchainId(raw)) throw badRequest(`chainId must be an EVM chain id or a blockchain id, got "${raw}"`);
  const chain = ctx.world.chain(raw);
  if (!chain) throw notFound(`chain ${raw} is not supported`);
  return chain;
}

export function evmAddress(raw: string, name: string): string {
  if (!isEvmAddress(raw)) throw badRequest(`${name} must be 0x followed by 40 hex digits, got "${raw}"`);
  return raw.toLowerCase();
}

export function blockRange(q: URLSearchParams): { startBlock?: number; endBlock?: number } {
  const startBlock = intParam(q, 'startBlock', 0, undefined);
  const endBlock = intParam(q, 'endBlock', 0, undefined);
  if (startBlock !== undefined && endBlock !== undefined && startBlock >= endBlock) {
    throw badRequest('startBlock must be less than endBlock (startBlock is inclusive, endBlock exclusive)');
  }
  return { ...(startBlock !== undefined ? { startBlock } : {}), ...(endBlock !== undefined ? { endBlock } : {}) };
}

// ---- paging ----

export function page<T>(
  listing: Listing<T>, offset: number, pageSize: number, issue: (next: number) => string,
): { items: T[]; nextPageToken?: string } {
  if (offset > listing.length) throw badRequest('pageToken is invalid');
  const end = Math.min(listing.length, offset + pageSize);
  const items: T[] = [];
  for (let k = offset; k < end; k++) items.push(listing.at(k));
  return end < listing.length ? { items, nextPageToken: issue(end) } : { items };
}

/**
 * The world a page is served from: a clocked world is frozen at the time of the listing's first
 * page (carried by the token), so later pages continue exactly where the previous one ended.
 */
export function snapshot(ctx: RouteContext, state: TokenState | undefined): { world: World; at?: number } {
  if (!ctx.world.clocked) return { world: ctx.world };
  const at = state?.at ?? ctx.world.now;
  return { world: ctx.world.asOf(at), at };
}

export function dataPage<T>(
  ctx: RouteContext, field: string, queryKey: string, list: (w: World) => Listing<T>, pageSize: number,
): object {
  const token = single(ctx.query, 'pageToken');
  const state = token === undefined ? undefined : ctx.tokens.redeem(token, queryKey);
  const { world, at } = snapshot(ctx, state);
  const { items, nextPageToken } = page(list(world), state?.offset ?? 0, pageSize, (next) => ctx.tokens.issue(queryKey, next, at));
  return nextPageToken === undefined ? { [field]: items } : { nextPageToken, [field]: items };
}


/** A block number up to the head, or the hash of a block the simulator has served. */
export function blockIdParam(ctx: RouteContext, chain: ChainInfo, raw: string): number {
  if (/^\d+$/.test(raw)) {
    const n = Number(raw);
    if (!Number.isSafeInteger(n)) throw badRequest(`blockId "${raw}" is out of range`);
    if (n > ctx.world.headBlock(chain.chainId)) throw notFound(`block ${raw} not found on chain ${chain.chainId}`);
    return n;
  }
  if (/^0x[0-9a-fA-F]{64}$/.test(raw)) {
    const n = ctx.world.blockNumberOfHash(chain.chainId, raw);
    if (n === undefined) throw notFound(`block ${raw} not found on chain ${chain.chainId}`);
    return n;
  }
  throw badRequest(`blockId must be a block number or a block hash (0x + 64 hex digits), got "${raw}"`);
}

export function blockNumberParam(ctx: RouteContext, chain: ChainInfo): number | undefined {
  const raw = single(ctx.query, 'blockNumber');
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw badRequest(`blockNumber must be a block number (decimal digits), got "${raw}"`);
  const head = ctx.world.headBlock(chain.chainId);
  if (Number(raw) > head) throw badRequest(`blockNumber ${raw} is above the latest block ${head}`);
  return Number(raw);
}

export function booleanParam(q: URLSearchParams, name: string): boolean | undefined {
  const raw = single(q, name);
  if (raw === undefined) return undefined;
  if (raw !== 'true' && raw !== 'false') throw badRequest(`${name} must be true or false, got "${raw}"`);
  return raw === 'true';
}

/**
 * A page of a listing of the world at a time: a clocked world's listing is frozen at the time of its
 * first page (the token carries it), on the data service's tokens or the metrics service's.
 */
export function pageAt<T>(
  ctx: RouteContext, key: string, pageSize: number, tokens: 'data' | 'metrics', list: (at: number) => Listing<T>,
): { items: T[]; nextPageToken?: string } {
  const token = single(ctx.query, 'pageToken');
  const state = token === undefined ? undefined : tokens === 'data' ? ctx.tokens.redeem(token, key) : ctx.tokens.redeemMetric(token, key);
  const at = ctx.world.clocked ? (state?.at ?? ctx.world.now) : undefined;
  const issue = (next: number) => (tokens === 'data' ? ctx.tokens.issue(key, next, at) : ctx.tokens.issueMetric(key, next, at));
  return page(list(at ?? ctx.world.now), state?.offset ?? 0, pageSize, issue);
}
