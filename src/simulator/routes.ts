// The routes: parameter validation (every 400 names its parameter), lookup in the world,
// and paging. Handlers return the JSON body or throw HttpError.
import { NETWORKS, isEvmChainId, type Network } from '../ids.js';
import { badRequest, notFound, type Service } from './errors.js';
import { fromArray } from './listing.js';
import {
  addressesParam, blockIdParam, blockNumberParam, blockRange, booleanParam, dataChain, dataPage, enumParam, evmAddress,
  intParam, listParam, networkParam, nodeIdsParam, page, single, snapshot,
} from './params.js';
import { NODE_ROUTES, isNodePath } from './node_routes.js';
import { ADDRESS_ACTIVITY_ROUTES } from './address_activity_routes.js';
import { PRIMARY_ROUTES } from './primary_routes.js';
import { PRIMARY_TX_ROUTES } from './primary_xc_routes.js';
import { WEIGHTS } from './ratelimit.js';
import type { Route, RouteContext, RouteTable } from './route.js';
import { AVG_TPS_PAGE_SIZE, METRICS, TIME_INTERVALS, dayOnly, type Metric, type TimeInterval } from './series.js';
import { CURRENCIES, type Currency, type DelegationStatus, type SortOrder } from './staking.js';
import { aggregateSignatures } from './signatures.js';
import { ICM_ROUTES } from './icm.js';
import type { World } from './world.js';
import { VALIDATOR_ROUTES } from './validators.js';
import { L1_METRIC_ROUTES } from './l1_metrics.js';
import { ADDRESS_TRANSFER_ROUTES } from './address_transfers.js';
import { ADDRESS_DETAIL_ROUTES } from './address_details.js';
import { PLATFORM_BALANCE_ROUTES } from './platform_balances.js';
import { USAGE_ROUTES } from './usage_routes.js';
// issue 40, the primary network and the X-Chain
import { NETWORK_DETAIL_ROUTES } from './network_details.js';
import { VERTEX_ROUTES } from './xchain_vertices.js';
// Issue 40, EVM and metrics side.
import { LOOKUP_ROUTES } from './lookups.js';
import { ADDRESS_DETAIL_V2_ROUTES } from './address_details_v2.js';
import { RPC_USAGE_ROUTES } from './rpc_usage.js';

const TABLE: RouteTable = [
  { pattern: ['v1', 'chains', null, 'tokens', null, 'transfers'], route: { name: 'transfers', service: 'data', weight: WEIGHTS.transfers, handle: transfers } },
  { pattern: ['v1', 'chains', null, 'addresses', null, 'transactions:listInternals'], route: { name: 'internals', service: 'data', weight: WEIGHTS.internals, handle: internals } },
  { pattern: ['v1', 'networks', null, 'rewards'], route: { name: 'rewards', service: 'data', weight: WEIGHTS.rewards, handle: rewards } },
  { pattern: ['v1', 'networks', null, 'rewards:listPending'], route: { name: 'pendingRewards', service: 'data', weight: WEIGHTS.pendingRewards, handle: pendingRewards } },
  { pattern: ['v1', 'networks', null, 'delegators'], route: { name: 'delegators', service: 'data', weight: WEIGHTS.delegators, handle: delegators } },
  { pattern: ['v2', 'chains', null, 'metrics', null], route: { name: 'metrics', service: 'metrics', weight: WEIGHTS.metrics, handle: metrics } },
  { pattern: ['v1', 'avg_tps', null], route: { name: 'avgTps', service: 'metrics', weight: WEIGHTS.avgTps, handle: avgTps } },
  { pattern: ['v1', 'chains'], route: { name: 'chains', service: 'data', weight: WEIGHTS.chains, handle: chains } },
  { pattern: ['v1', 'chains', null, 'blocks'], route: { name: 'blocks', service: 'data', weight: WEIGHTS.blocks, handle: latestBlocks } },
  { pattern: ['v1', 'chains', null, 'blocks', null], route: { name: 'block', service: 'data', weight: WEIGHTS.block, handle: block } },
  { pattern: ['v1', 'chains', null, 'blocks', null, 'transactions'], route: { name: 'blockTransactions', service: 'data', weight: WEIGHTS.blockTransactions, handle: blockTransactions } },
  { pattern: ['v1', 'chains', null, 'addresses', null, 'balances:getNative'], route: { name: 'nativeBalance', service: 'data', weight: WEIGHTS.nativeBalance, handle: nativeBalance } },
  { pattern: ['v1', 'chains', null, 'addresses', null, 'balances:listErc20'], route: { name: 'erc20Balances', service: 'data', weight: WEIGHTS.erc20Balances, handle: erc20Balances } },
  { pattern: ['v1', 'chains', null, 'addresses', null], route: { name: 'contractMetadata', service: 'data', weight: WEIGHTS.contractMetadata, handle: contractMetadata } },
  { pattern: ['v1', 'networks', null, 'subnets'], route: { name: 'subnets', service: 'data', weight: WEIGHTS.subnets, handle: subnets } },
  { pattern: ['v1', 'networks', null, 'addresses:listChainIds'], route: { name: 'addressChains', service: 'data', weight: WEIGHTS.addressChains, handle: addressChains } },
  // Production answers 201 Created to both POSTs where its documentation says 200; chainlake takes
  // either (docs/services.md, Export operations and signatures).
  { pattern: ['v1', 'operations', 'transactions:export'], route: { name: 'exportStart', service: 'data', weight: WEIGHTS.exportStart, method: 'POST', status: 201, handle: (ctx) => ctx.operations.start(ctx.body) } },
  { pattern: ['v1', 'operations', null], route: { name: 'operation', service: 'data', weight: WEIGHTS.operation, handle: (ctx) => ctx.operations.get(ctx.params[0]!) } },
  {
    pattern: ['v1', 'signatureAggregator', null, 'aggregateSignatures'],
    route: { name: 'aggregateSignatures', service: 'data', weight: WEIGHTS.aggregateSignatures, method: 'POST', status: 201, handle: (ctx) => aggregateSignatures(ctx.world.seed, networkParam(ctx.params[0]!), ctx.body) },
  },
  ...NODE_ROUTES,
  ...ADDRESS_ACTIVITY_ROUTES,
  ...ICM_ROUTES,
  ...VALIDATOR_ROUTES,
  ...PRIMARY_ROUTES,
  ...PRIMARY_TX_ROUTES,
  ...L1_METRIC_ROUTES,
  ...ADDRESS_TRANSFER_ROUTES,
  ...ADDRESS_DETAIL_ROUTES,
  ...PLATFORM_BALANCE_ROUTES,
  ...USAGE_ROUTES,
  // issue 40, the primary network and the X-Chain
  ...NETWORK_DETAIL_ROUTES,
  ...VERTEX_ROUTES,
  // Issue 40, EVM and metrics side.
  ...LOOKUP_ROUTES,
  ...ADDRESS_DETAIL_V2_ROUTES,
  ...RPC_USAGE_ROUTES,
];

export function matchRoute(segments: readonly string[], method = 'GET'): { route: Route; params: string[] } | undefined {
  for (const { pattern, route } of TABLE) {
    if (pattern.length !== segments.length || (route.method ?? 'GET') !== method) continue;
    const params: string[] = [];
    let ok = true;
    for (let i = 0; i < pattern.length && ok; i++) {
      if (pattern[i] === null) params.push(segments[i]!);
      else ok = pattern[i] === segments[i];
    }
    if (ok) return { route, params };
  }
  return undefined;
}

/** Which service's error shape an unmatched path gets. */
export function serviceOfPath(segments: readonly string[]): Service {
  if (isNodePath(segments)) return 'node';
  return segments[0] === 'v2' || segments[1] === 'avg_tps' ? 'metrics' : 'data';
}

// ---- data service ----

function transfers(ctx: RouteContext): unknown {
  const chain = dataChain(ctx, ctx.params[0]!);
  const address = evmAddress(ctx.params[1]!, 'address');
  const pageSize = intParam(ctx.query, 'pageSize', 1, 100, 10)!;
  const range = blockRange(ctx.query);
  if (!ctx.world.contract(chain.chainId, address)) throw notFound(`token contract ${ctx.params[1]} not found on chain ${chain.chainId}`);
  const key = JSON.stringify(['transfers', chain.chainId, address, range.startBlock ?? null, range.endBlock ?? null]);
  return dataPage(ctx, 'transfers', key, (w) => w.listTransfers(chain.chainId, address, range), pageSize);
}

function internals(ctx: RouteContext): unknown {
  const chain = dataChain(ctx, ctx.params[0]!);
  const address = evmAddress(ctx.params[1]!, 'address');
  const pageSize = intParam(ctx.query, 'pageSize', 1, 100, 10)!;
  const range = blockRange(ctx.query);
  const key = JSON.stringify(['internals', chain.chainId, address, range.startBlock ?? null, range.endBlock ?? null]);
  return dataPage(ctx, 'transactions', key, (w) => w.listInternals(chain.chainId, address, range), pageSize);
}

interface RewardParams {
  network: Network;
  addresses?: string[];
  nodeIds?: string[];
  sortOrder?: SortOrder;
  pageSize: number;
}

function rewardParams(ctx: RouteContext): RewardParams {
  const network = networkParam(ctx.params[0]!);
  const addresses = addressesParam(ctx.query, 'addresses', network);
  const nodeIds = nodeIdsParam(ctx.query);
  if (!addresses && !nodeIds) throw badRequest('at least one of addresses or nodeIds is required');
  const sortOrder = enumParam(ctx.query, 'sortOrder', ['asc', 'desc'] as const);
  const pageSize = intParam(ctx.query, 'pageSize', 1, 100, 10)!;
  return {
    network, pageSize, ...(addresses ? { addresses } : {}), ...(nodeIds ? { nodeIds } : {}), ...(sortOrder ? { sortOrder } : {}),
  };
}

function rewards(ctx: RouteContext): unknown {
  const p = rewardParams(ctx);
  const currency: Currency = enumParam(ctx.query, 'currency', CURRENCIES) ?? 'usd';
  const key = JSON.stringify(['rewards', p.network, p.addresses ?? null, p.nodeIds ?? null, p.sortOrder ?? null, currency]);
  return dataPage(ctx, 'historicalRewards', key, (w) => w.listRewards(p.network, { ...pick(p), currency }), p.pageSize);
}

function pendingRewards(ctx: RouteContext): unknown {
  const p = rewardParams(ctx);
  const key = JSON.stringify(['pendingRewards', p.network, p.addresses ?? null, p.nodeIds ?? null, p.sortOrder ?? null]);
  return dataPage(ctx, 'pendingRewards', key, (w) => w.listPendingRewards(p.network, pick(p)), p.pageSize);
}

function pick(p: RewardParams): { addresses?: string[]; nodeIds?: string[]; sortOrder?: SortOrder } {
  return {
    ...(p.addresses ? { addresses: p.addresses } : {}), ...(p.nodeIds ? { nodeIds: p.nodeIds } : {}),
    ...(p.sortOrder ? { sortOrder: p.sortOrder } : {}),
  };
}

function delegators(ctx: RouteContext): unknown {
  const network = networkParam(ctx.params[0]!);
  const rewardAddresses = addressesParam(ctx.query, 'rewardAddresses', network);
  const nodeIds = nodeIdsParam(ctx.query);
  const delegationStatus = enumParam<DelegationStatus>(ctx.query, 'delegationStatus', ['completed', 'active', 'pending']);
  const sortOrder = enumParam<SortOrder>(ctx.query, 'sortOrder', ['asc', 'desc']);
  const pageSize = intParam(ctx.query, 'pageSize', 1, 100, 10)!;
  const key = JSON.stringify(['delegators', network, rewardAddresses ?? null, nodeIds ?? null, delegationStatus ?? null, sortOrder ?? null]);
  const q = {
    ...(rewardAddresses ? { rewardAddresses } : {}), ...(nodeIds ? { nodeIds } : {}),
    ...(delegationStatus ? { delegationStatus } : {}), ...(sortOrder ? { sortOrder } : {}),
  };
  return dataPage(ctx, 'delegators', key, (w) => w.listDelegators(network, q), pageSize);
}

// ---- blocks ----


function latestBlocks(ctx: RouteContext): unknown {
  const chain = dataChain(ctx, ctx.params[0]!);
  const pageSize = intParam(ctx.query, 'pageSize', 1, 100, 10)!;
  return dataPage(ctx, 'blocks', JSON.stringify(['blocks', chain.chainId]), (w) => w.listBlocks(chain.chainId), pageSize);
}

function block(ctx: RouteContext): unknown {
  const chain = dataChain(ctx, ctx.params[0]!);
  return ctx.world.block(chain.chainId, blockIdParam(ctx, chain, ctx.params[1]!));
}

function blockTransactions(ctx: RouteContext): unknown {
  const chain = dataChain(ctx, ctx.params[0]!);
  const n = blockIdParam(ctx, chain, ctx.params[1]!);
  // The service takes 0 to 100, default 0, without saying what 0 means; here it is "the whole
  // block" (docs/services.md, Data service).
  const pageSize = intParam(ctx.query, 'pageSize', 0, 100, 0)!;
  const key = JSON.stringify(['blockTransactions', chain.chainId, n]);
  return dataPage(ctx, 'transactions', key, (w) => fromArray(w.blockTransactions(chain.chainId, n)), pageSize === 0 ? Number.MAX_SAFE_INTEGER : pageSize);
}

// ---- balances ----



function nativeBalance(ctx: RouteContext): unknown {
  const chain = dataChain(ctx, ctx.params[0]!);
  const address = evmAddress(ctx.params[1]!, 'address');
  const blockNumber = blockNumberParam(ctx, chain);
  const currency: Currency = enumParam(ctx.query, 'currency', CURRENCIES) ?? 'usd';
  return { nativeTokenBalance: ctx.world.nativeBalance(chain.chainId, address, blockNumber, currency) };
}

function erc20Balances(ctx: RouteContext): unknown {
  const chain = dataChain(ctx, ctx.params[0]!);
  const address = evmAddress(ctx.params[1]!, 'address');
  const blockNumber = blockNumberParam(ctx, chain);
  const pageSize = intParam(ctx.query, 'pageSize', 1, 500, 10)!;
  const filterSpamTokens = booleanParam(ctx.query, 'filterSpamTokens') ?? true;
  const contractAddresses = listParam(ctx.query, 'contractAddresses')?.map((a) => evmAddress(a, 'contractAddresses'));
  const currency: Currency = enumParam(ctx.query, 'currency', CURRENCIES) ?? 'usd';
  const key = JSON.stringify(['erc20Balances', chain.chainId, address, blockNumber ?? null, filterSpamTokens, contractAddresses ?? null, currency]);
  let native: unknown;
  // "Latest" is the head of the listing's snapshot, so every page is of the same block.
  const body = dataPage(ctx, 'erc20TokenBalances', key, (w) => {
    const at = blockNumber ?? w.headBlock(chain.chainId);
    native = w.nativeBalance(chain.chainId, address, at, currency);
    return fromArray(w.erc20Balances(chain.chainId, address, { block: at, currency, filterSpamTokens, ...(contractAddresses ? { contractAddresses } : {}) }));
  }, pageSize);
  return { ...body, nativeTokenBalance: native };
}

// ---- subnets, contracts, chains ----

function subnets(ctx: RouteContext): unknown {
  const network = networkParam(ctx.params[0]!);
  const pageSize = intParam(ctx.query, 'pageSize', 1, 10_000, 100)!;
  const sortOrder = enumParam<SortOrder>(ctx.query, 'sortOrder', ['asc', 'desc']);
  const key = JSON.stringify(['subnets', network, sortOrder ?? null]);
  return dataPage(ctx, 'subnets', key, (w) => w.listSubnets(network, sortOrder), pageSize);
}

function contractMetadata(ctx: RouteContext): unknown {
  const chain = dataChain(ctx, ctx.params[0]!);
  const address = evmAddress(ctx.params[1]!, 'address');
  const m = ctx.world.contractMetadata(chain.chainId, address);
  if (!m) throw notFound(`no contract at ${ctx.params[1]} on chain ${chain.chainId}`);
  return m;
}

function addressChains(ctx: RouteContext): unknown {
  const network = networkParam(ctx.params[0]!);
  const addresses = addressesParam(ctx.query, 'addresses', network);
  if (!addresses) throw badRequest('addresses is required');
  return { addresses: ctx.world.addressChains(network, addresses) };
}

function chains(ctx: RouteContext): unknown {
  const network = enumParam(ctx.query, 'network', NETWORKS);
  const feature = enumParam(ctx.query, 'feature', ['nftIndexing', 'webhooks', 'teleporter'] as const);
  return { chains: ctx.world.supportedChains(network, feature) };
}

// ---- metrics service ----

function metricsChain(ctx: RouteContext, raw: string, aggregatesAllowed: boolean): string {
  const aggregate = raw === 'total' || raw === 'mainnet' || raw === 'testnet';
  if (aggregate && aggregatesAllowed) return raw;
  if (!isEvmChainId(raw)) {
    throw badRequest(aggregatesAllowed ? `chainId must be an EVM chain id or one of total, mainnet, testnet, got "${raw}"` : `chainId must be an EVM chain id, got "${raw}"`);
  }
  if (!ctx.world.chain(raw)) throw notFound(`chain ${raw} is not supported`);
  return raw;
}

function metrics(ctx: RouteContext): unknown {
  const chainId = metricsChain(ctx, ctx.params[0]!, true);
  const metricRaw = ctx.params[1]!;
  if (!(METRICS as readonly string[]).includes(metricRaw)) throw badRequest(`metric must be one of: ${METRICS.join(', ')}`);
  const metric = metricRaw as Metric;
  const timeInterval: TimeInterval = enumParam(ctx.query, 'timeInterval', TIME_INTERVALS) ?? 'day';
  if (dayOnly(metric) && timeInterval !== 'day') throw badRequest(`timeInterval must be day for metric ${metric}`);
  const startTimestamp = intParam(ctx.query, 'startTimestamp', 0, undefined);
  const endTimestamp = intParam(ctx.query, 'endTimestamp', 0, undefined);
  if (startTimestamp !== undefined && endTimestamp !== undefined && startTimestamp > endTimestamp) {
    throw badRequest('startTimestamp must not be greater than endTimestamp');
  }
  const pageSize = intParam(ctx.query, 'pageSize', 1, 2160, 100)!;
  const key = JSON.stringify(['metrics', chainId, metric, timeInterval, startTimestamp ?? null, endTimestamp ?? null]);
  const token = single(ctx.query, 'pageToken');
  const state = token === undefined ? undefined : ctx.tokens.redeemMetric(token, key);
  const { world, at } = snapshot(ctx, state);
  const listing = world.listMetric(chainId, metric, {
    timeInterval, ...(startTimestamp !== undefined ? { startTimestamp } : {}), ...(endTimestamp !== undefined ? { endTimestamp } : {}),
  });
  const { items, nextPageToken } = page(listing, state?.offset ?? 0, pageSize, (next) => ctx.tokens.issueMetric(key, next, at));
  return nextPageToken === undefined ? { results: items } : { results: items, nextPageToken };
}

function avgTps(ctx: RouteContext): unknown {
  const chainId = metricsChain(ctx, ctx.params[0]!, false);
  const key = JSON.stringify(['avgTps', chainId]);
  const token = single(ctx.query, 'pageToken');
  const state = token === undefined ? undefined : ctx.tokens.redeemMetric(token, key);
  const { world, at } = snapshot(ctx, state);
  const { items, nextPageToken } = page(world.listAvgTps(chainId), state?.offset ?? 0, AVG_TPS_PAGE_SIZE, (next) => ctx.tokens.issueMetric(key, next, at));
  const body = { results: items, status: 200, lastRun: world.avgTpsLastRun() };
  // Either way the next request sends the key back as pageToken.
  return nextPageToken === undefined ? body : { ...body, [ctx.avgTpsNextKey ?? 'nextPageToken']: nextPageToken };
}

