// The routes of the platform chain (P-Chain) on the data service (docs/services.md, Data service,
// Platform chain): parameters checked, the world of primary.ts listed and paged. Apart from the
// world so that what sits below the routes (the node's world) can read the P-Chain.
import { isBlockchainId, isEvmAddress, nodeIdProblem, primaryAddressProblem, type Network } from '../ids.js';
import { badRequest, notFound } from './errors.js';
import { intParam, networkParam, page, single } from './params.js';
import {
  BLOCKCHAIN_IDS, PRIMARY_TX_TYPES, P_CHAIN_ID, UTXO_PAGE_LIMIT, primaryWorld, type PrimaryNetworkBlock, type PrimaryTxQuery, type TimeRange,
} from './primary.js';
import { WEIGHTS } from './ratelimit.js';
import type { RouteContext, RouteTable } from './route.js';

/** The network of the path, for the routes that serve the P-Chain only (blocks, balances, UTXOs). */
export function pathChain(ctx: RouteContext): Network {
  const network = networkParam(ctx.params[0]!);
  const chain = ctx.params[1]!;
  if (!BLOCKCHAIN_IDS.includes(chain)) throw badRequest(`blockchainId must be one of: ${BLOCKCHAIN_IDS.join(', ')}`);
  if (chain !== P_CHAIN_ID && chain !== 'p-chain') throw notFound(`blockchainId ${chain}: the simulator serves only the P-Chain (p-chain or ${P_CHAIN_ID})`);
  return network;
}

export function timeRange(q: URLSearchParams): TimeRange {
  const startTimestamp = intParam(q, 'startTimestamp', 0);
  const endTimestamp = intParam(q, 'endTimestamp', 0);
  if (startTimestamp !== undefined && endTimestamp !== undefined && startTimestamp > endTimestamp) {
    throw badRequest('startTimestamp must not be greater than endTimestamp');
  }
  return { ...(startTimestamp !== undefined ? { startTimestamp } : {}), ...(endTimestamp !== undefined ? { endTimestamp } : {}) };
}

/** A listing's offset and the world time it is served as of (a clocked world freezes at the first page). */
export function listingPosition(ctx: RouteContext, key: string): { offset: number; t: number; at?: number } {
  const token = single(ctx.query, 'pageToken');
  const state = token === undefined ? undefined : ctx.tokens.redeem(token, key);
  if (!ctx.world.clocked) return { offset: state?.offset ?? 0, t: ctx.world.now };
  const at = state?.at ?? ctx.world.now;
  return { offset: state?.offset ?? 0, t: at, at };
}

function chainInfo(network: Network): { chainName: 'p-chain'; network: Network } {
  return { chainName: 'p-chain', network };
}

/**
 * The filters a transaction listing takes (the latest transactions, the active staking ones), each
 * checked; `evm`: 0x accounts are addresses too (the C-Chain's atomic transactions).
 */
export function txFilters(q: URLSearchParams, network: Network, evm = false): { query: PrimaryTxQuery; pageSize: number } {
  const raw = single(q, 'addresses');
  let addresses: string[] | undefined;
  if (raw !== undefined) {
    addresses = raw.split(',').map((s) => s.trim());
    for (const a of addresses) {
      if (evm && isEvmAddress(a)) continue;
      const problem = a === '' ? 'is empty' : primaryAddressProblem(a, network);
      if (problem) throw badRequest(`addresses: "${a}" ${problem}`);
    }
  }
  const typesRaw = single(q, 'txTypes');
  const txTypes = typesRaw?.split(',');
  for (const t of txTypes ?? []) if (!PRIMARY_TX_TYPES.includes(t)) throw badRequest(`txTypes: "${t}" must be one of: ${PRIMARY_TX_TYPES.join(', ')}`);
  const range = timeRange(q);
  const sortOrder = single(q, 'sortOrder');
  if (sortOrder !== undefined && sortOrder !== 'asc' && sortOrder !== 'desc') throw badRequest('sortOrder must be one of: asc, desc');
  const pageSize = intParam(q, 'pageSize', 1, 100) ?? 10;
  const query: PrimaryTxQuery = {
    ...(addresses ? { addresses } : {}), ...(txTypes ? { txTypes } : {}), ...range, ...(sortOrder ? { sortOrder: sortOrder as 'asc' | 'desc' } : {}),
  };
  return { query, pageSize };
}

/** The P-Chain's side of the transactions route (primary_xc.ts answers the path for all three chains). */
export function platformTransactions(ctx: RouteContext, network: Network): unknown {
  const q = ctx.query;
  const { query: filters, pageSize } = txFilters(q, network);
  const l1 = single(q, 'l1ValidationId');
  if (l1 !== undefined && !isBlockchainId(l1)) throw badRequest(`l1ValidationId must be an id (cb58 of 32 bytes), got "${l1}"`);
  // The service filters by type and time only within an address's (or a validation's) transactions.
  if (!filters.addresses && l1 === undefined) {
    for (const name of ['txTypes', 'startTimestamp', 'endTimestamp']) {
      if (q.has(name)) throw badRequest(`${name} is supported only with addresses or l1ValidationId`);
    }
  }
  const query: PrimaryTxQuery = { ...filters, ...(l1 !== undefined ? { l1ValidationId: l1 } : {}) };
  const key = JSON.stringify(['primaryTransactions', network, query]);
  const { offset, t, at } = listingPosition(ctx, key);
  const listing = primaryWorld(ctx.world.seed).listTransactions(network, query, t);
  const { items, nextPageToken } = utxoPage(listing, offset, pageSize, (next) => ctx.tokens.issue(key, next, at));
  const body = { transactions: items, chainInfo: chainInfo(network) };
  return nextPageToken === undefined ? body : { nextPageToken, ...body };
}

/**
 * A page of a transactions listing from `offset`: up to pageSize transactions, closed early once
 * they hold UTXO_PAGE_LIMIT UTXOs (production's "performance threshold"), as every chain's is.
 */
export function utxoPage<T extends { consumedUtxos?: readonly unknown[]; emittedUtxos?: readonly unknown[] }>(
  listing: { length: number; at(k: number): T }, offset: number, pageSize: number, issue: (next: number) => string,
): { items: T[]; nextPageToken?: string } {
  if (offset > listing.length) throw badRequest('pageToken is invalid');
  const items: T[] = [];
  let utxos = 0;
  for (let k = offset; k < listing.length && items.length < pageSize && utxos < UTXO_PAGE_LIMIT; k++) {
    const tx = listing.at(k);
    items.push(tx);
    utxos += (tx.consumedUtxos?.length ?? 0) + (tx.emittedUtxos?.length ?? 0);
  }
  const end = offset + items.length;
  return end < listing.length ? { items, nextPageToken: issue(end) } : { items };
}

/**
 * The active staking transactions of addresses, or of the whole network without them (the
 * OpenAPI's `addresses` is optional): the path takes the P-Chain only (the OpenAPI's PChainId).
 */
function stakingTransactions(ctx: RouteContext): unknown {
  const network = networkParam(ctx.params[0]!);
  const chain = ctx.params[1]!;
  if (chain !== P_CHAIN_ID && chain !== 'p-chain') throw badRequest(`blockchainId must be one of: ${P_CHAIN_ID}, p-chain`);
  const { query, pageSize } = txFilters(ctx.query, network);
  const key = JSON.stringify(['primaryStaking', network, query]);
  const { offset, t, at } = listingPosition(ctx, key);
  const { items, nextPageToken } = page(primaryWorld(ctx.world.seed).listStaking(network, query, t), offset, pageSize, (next) => ctx.tokens.issue(key, next, at));
  const body = { transactions: items, chainInfo: chainInfo(network) };
  return nextPageToken === undefined ? body : { nextPageToken, ...body };
}

/** The P-Chain's side of the blocks route (primary_xc.ts answers the path for the X-Chain too). */
export function platformBlocks(ctx: RouteContext): unknown {
  const network = pathChain(ctx);
  const range = timeRange(ctx.query);
  const pageSize = intParam(ctx.query, 'pageSize', 1, 100) ?? 10;
  const key = JSON.stringify(['primaryBlocks', network, range]);
  const { offset, t, at } = listingPosition(ctx, key);
  const listing = primaryWorld(ctx.world.seed).listBlocks(network, range, t);
  if (offset > listing.length) throw badRequest('pageToken is invalid');
  const end = Math.min(listing.length, offset + pageSize);
  const items: PrimaryNetworkBlock[] = [];
  for (let k = offset; k < end; k++) items.push(listing.at(k));
  const body = { blocks: items, chainInfo: chainInfo(network) };
  return end < listing.length ? { nextPageToken: ctx.tokens.issue(key, end, at), ...body } : body;
}

function nodeBlocks(ctx: RouteContext): unknown {
  const network = pathChain(ctx);
  const nodeId = ctx.params[2]!;
  const problem = nodeIdProblem(nodeId);
  if (problem) throw badRequest(`nodeId: "${nodeId}" ${problem}`);
  const range = timeRange(ctx.query);
  const pageSize = intParam(ctx.query, 'pageSize', 1, 100) ?? 10;
  const key = JSON.stringify(['primaryNodeBlocks', network, nodeId, range]);
  const { offset, t, at } = listingPosition(ctx, key);
  const { items, nextPageToken } = page(primaryWorld(ctx.world.seed).listBlocksByNode(network, nodeId, range, t), offset, pageSize, (next) => ctx.tokens.issue(key, next, at));
  const body = { blocks: items, chainInfo: chainInfo(network) };
  return nextPageToken === undefined ? body : { nextPageToken, ...body };
}

export const PRIMARY_ROUTES: RouteTable = [
  { pattern: ['v1', 'networks', null, 'blockchains', null, 'transactions:listStaking'], route: { name: 'primaryStaking', service: 'data', weight: WEIGHTS.primaryStaking, handle: stakingTransactions } },
  { pattern: ['v1', 'networks', null, 'blockchains', null, 'nodes', null, 'blocks'], route: { name: 'primaryNodeBlocks', service: 'data', weight: WEIGHTS.primaryNodeBlocks, handle: nodeBlocks } },
];
