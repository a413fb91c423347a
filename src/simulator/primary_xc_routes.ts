// The primary network's transactions and blocks routes for the three chains, and an X-Chain
// asset's transactions (docs/services.md, Data service, X- and C-Chain transactions): the P-Chain's
// answered by primary_routes.ts, the X- and C-Chain's from the world of primary_xc.ts.
import { isBlockchainId, type Network } from '../ids.js';
import { badRequest } from './errors.js';
import { intParam, networkParam, page } from './params.js';
import { BLOCKCHAIN_IDS, C_CHAIN, P_CHAIN_ID, X_CHAIN } from './primary.js';
import { listingPosition, platformBlocks, platformTransactions, timeRange, txFilters, utxoPage } from './primary_routes.js';
import { atomicWorld, type CChainAtomicTransaction, type XChainTransaction, type XcChain } from './primary_xc.js';
import { WEIGHTS } from './ratelimit.js';
import type { RouteContext, RouteTable } from './route.js';
import { stakingNetwork } from './staking.js';

// ---- the route: one path for the three chains ----

/** Which chain the path names; an id of the other network's chains is refused. */
function chainOf(raw: string, network: Network): 'p' | XcChain {
  if (!BLOCKCHAIN_IDS.includes(raw)) throw badRequest(`blockchainId must be one of: ${BLOCKCHAIN_IDS.join(', ')}`);
  if (raw === 'p-chain' || raw === P_CHAIN_ID) return 'p';
  if (raw === 'x-chain' || raw === 'c-chain') return raw === 'x-chain' ? 'x' : 'c';
  const net = stakingNetwork(network);
  if (raw === X_CHAIN[net]) return 'x';
  if (raw === C_CHAIN[net]) return 'c';
  throw badRequest(`blockchainId ${raw} is not a chain of ${network}`);
}

function transactions(ctx: RouteContext): unknown {
  const network = networkParam(ctx.params[0]!);
  const chain = chainOf(ctx.params[1]!, network);
  if (chain === 'p') return platformTransactions(ctx, network);
  const q = ctx.query;
  const { query, pageSize } = txFilters(q, network, chain === 'c');
  if (q.has('l1ValidationId')) throw badRequest('l1ValidationId is supported only on the P-Chain');
  // The service filters by type and time only within an address's transactions.
  if (!query.addresses) {
    for (const name of ['txTypes', 'startTimestamp', 'endTimestamp']) if (q.has(name)) throw badRequest(`${name} is supported only with addresses`);
  }
  const key = JSON.stringify(['primaryTransactions', chain, network, query]);
  const { offset, t, at } = listingPosition(ctx, key);
  const listing = atomicWorld(ctx.world.seed, chain).listTransactions<XChainTransaction | CChainAtomicTransaction>(network, query, t);
  const { items, nextPageToken } = utxoPage(listing, offset, pageSize, (next) => ctx.tokens.issue(key, next, at));
  const body = { transactions: items, chainInfo: { chainName: chain === 'x' ? 'x-chain' : 'c-chain', network } };
  return nextPageToken === undefined ? body : { nextPageToken, ...body };
}

/** The blocks of a chain (listLatestPrimaryNetworkBlocks): the C-Chain's those with atomic transactions (primary_xc.ts). */
function blocks(ctx: RouteContext): unknown {
  const network = networkParam(ctx.params[0]!);
  const chain = chainOf(ctx.params[1]!, network);
  if (chain === 'p') return platformBlocks(ctx);
  const range = timeRange(ctx.query);
  const pageSize = intParam(ctx.query, 'pageSize', 1, 100) ?? 10;
  const key = JSON.stringify(['primaryBlocks', chain, network, range]);
  const { offset, t, at } = listingPosition(ctx, key);
  const { items, nextPageToken } = page(atomicWorld(ctx.world.seed, chain).listBlocks(network, range, t), offset, pageSize, (next) => ctx.tokens.issue(key, next, at));
  const body = { blocks: items, chainInfo: { chainName: chain === 'x' ? 'x-chain' : 'c-chain', network } };
  return nextPageToken === undefined ? body : { nextPageToken, ...body };
}

/** An X-Chain asset's transactions (listAssetTransactions): the X-Chain's listing, filtered by the asset they move. */
function assetTransactions(ctx: RouteContext): unknown {
  const network = networkParam(ctx.params[0]!);
  if (chainOf(ctx.params[1]!, network) !== 'x') throw badRequest('blockchainId must be the X-Chain (x-chain or its id): assets are listed there only');
  const assetId = ctx.params[2]!;
  if (!isBlockchainId(assetId)) throw badRequest(`assetId must be an asset id (cb58 of 32 bytes), got "${assetId}"`);
  const q = ctx.query;
  if (q.has('addresses')) throw badRequest('addresses is not a parameter of an asset\'s transactions');
  const { query, pageSize } = txFilters(q, network);
  const key = JSON.stringify(['assetTransactions', network, assetId, query]);
  const { offset, t, at } = listingPosition(ctx, key);
  const listing = atomicWorld(ctx.world.seed, 'x').listTransactions<XChainTransaction>(network, { ...query, assetId }, t);
  const { items, nextPageToken } = utxoPage(listing, offset, pageSize, (next) => ctx.tokens.issue(key, next, at));
  const body = { transactions: items, chainInfo: { chainName: 'x-chain', network } };
  return nextPageToken === undefined ? body : { nextPageToken, ...body };
}

export const PRIMARY_TX_ROUTES: RouteTable = [
  { pattern: ['v1', 'networks', null, 'blockchains', null, 'blocks'], route: { name: 'primaryBlocks', service: 'data', weight: WEIGHTS.primaryBlocks, handle: blocks } },
  // issue 40, the primary network and the X-Chain
  { pattern: ['v1', 'networks', null, 'blockchains', null, 'assets', null, 'transactions'], route: { name: 'assetTransactions', service: 'data', weight: WEIGHTS.assetTransactions, handle: assetTransactions } },
  { pattern: ['v1', 'networks', null, 'blockchains', null, 'transactions'], route: { name: 'primaryTransactions', service: 'data', weight: WEIGHTS.primaryTransactions, handle: transactions } },
];
