// Lookups of issue 40's EVM and metrics side, each read off the worlds the other routes serve so
// that the services agree: the metrics service's chains are the data service's, its rolling
// windows sum the chain series' daily points, its ICM summary counts the ICM world's messages, the
// addresses validating an L1 are the owners of the L1 validations the data service lists; the
// chains an address is active on are those whose world holds it, and an NFT collection's tokens are
// the tokens its transfers carry, each with the owner its last transfer left it with; an address's
// last activity is its newest transaction of the P-Chain listing.
import { isEvmChainId, type Network } from '../ids.js';
import { badRequest, notFound } from './errors.js';
import { headAt, type ChainInfo, type Erc721Token, type Erc1155Token, type EvmWorld } from './evm.js';
import { Rng, memoized } from './hash.js';
import { fromArray, iterate, type Listing } from './listing.js';
import { enumParam, evmAddress, dataChain, dataPage, intParam, networkParam, pageAt, single } from './params.js';
import { WEIGHTS } from './ratelimit.js';
import type { RouteContext, RouteTable } from './route.js';
import { dayOnly, type Metric } from './series.js';
import { icmOf, ICM_GROUP_BY } from './icm.js';
import { P_CHAIN_ID, primaryWorld } from './primary.js';
import { txFilters } from './primary_routes.js';
import { addressBody, stakingNetwork } from './staking.js';
import { LAKESIDE_SUBNET_ID, PRIMARY_NETWORK_ID } from './subnets.js';
import { validatorWorld } from './validators.js';
import type { World } from './world.js';

const HOUR = 3600;
const DAY = 86_400;

// ---- metrics service ----

/** A chain as the metrics service lists it (`GET /v2/chains`). */
export interface MetricsChain {
  evmChainId: number;
  chainName: string;
  blockchainId: string;
  subnetId: string;
  network: 'mainnet' | 'testnet';
}

/** The chains of the data service's world, as the metrics service names them; `network` fuji or testnet: the test chains. */
export function metricsChains(world: World, network?: Network): MetricsChain[] {
  return world.evm.chains
    .filter((c) => network === undefined || (network === 'mainnet') === (c.network === 'mainnet'))
    .map((c) => ({
      evmChainId: Number(c.chainId),
      chainName: c.name.toLowerCase().replace(/[^a-z0-9]+/g, '_'),
      blockchainId: c.blockchainId,
      subnetId: c.chainId === '43114' || c.chainId === '43113' ? PRIMARY_NETWORK_ID : LAKESIDE_SUBNET_ID,
      network: c.network === 'mainnet' ? 'mainnet' : 'testnet',
    }));
}

export const ROLLING_METRICS = [
  'gasUsed', 'txCount', 'avgGps', 'maxGps', 'avgTps', 'maxTps', 'avgGasPrice', 'maxGasPrice', 'feesPaid', 'contracts', 'deployers', 'activeAddresses', 'activeSenders',
] as const satisfies readonly Metric[];
export type RollingMetric = (typeof ROLLING_METRICS)[number];

/** The windows of a rolling summary, in days (allTime: every point). */
export const WINDOWS = { lastDay: 1, lastWeek: 7, lastMonth: 30, last90Days: 90, lastYear: 365 } as const;

/** How a metric's points make a window: counts add up, maxima take the largest, averages the mean. */
function aggregate(metric: string, values: number[]): number {
  if (values.length === 0) return 0;
  if (metric.startsWith('max') || metric.startsWith('active')) return Math.max(...values);
  if (metric.startsWith('avg')) return values.reduce((a, b) => a + b, 0) / values.length;
  return values.reduce((a, b) => a + b, 0);
}

/**
 * A metric's rolling windows at `at`: a window of n days aggregates the n newest daily points (the
 * running day's included), as chain_metrics lands them; lastHour is the running hour's point, for
 * the metrics with an hourly series. Distinct addresses of several days cannot be added up: the
 * world keeps no address sets, so activeAddresses and activeSenders take the busiest day.
 */
export function rollingWindow(world: World, chainId: string, metric: RollingMetric, at: number): Record<string, number> {
  const daily = [...iterate(world.series.listMetric(chainId, metric, { timeInterval: 'day' }, at))].map((p) => p.value);
  const out: Record<string, number> = {};
  if (!dayOnly(metric)) {
    const hour = world.series.listMetric(chainId, metric, { timeInterval: 'hour', startTimestamp: Math.floor(at / HOUR) * HOUR }, at);
    if (hour.length > 0) out.lastHour = hour.at(0).value;
  }
  for (const [name, days] of Object.entries(WINDOWS)) out[name] = aggregate(metric, daily.slice(0, days));
  out.allTime = aggregate(metric, daily);
  return out;
}

function seriesChain(ctx: RouteContext, raw: string): string {
  if (!isEvmChainId(raw)) throw badRequest(`chainId must be an EVM chain id, got "${raw}"`);
  if (!ctx.world.chain(raw)) throw notFound(`chain ${raw} is not supported`);
  return raw;
}

function rollingWindowMetrics(ctx: RouteContext): unknown {
  const chainId = seriesChain(ctx, ctx.params[0]!);
  const metric = ctx.params[1]!;
  if (!(ROLLING_METRICS as readonly string[]).includes(metric)) throw badRequest(`metric must be one of: ${ROLLING_METRICS.join(', ')}`);
  return { result: rollingWindow(ctx.world, chainId, metric as RollingMetric, ctx.world.now) };
}

/** The ICM summary's windows, in seconds: messages sent in the hours starting within each. */
const ICM_WINDOWS = { lastHour: HOUR, lastDay: DAY, lastWeek: 7 * DAY, lastMonth: 30 * DAY, last90Days: 90 * DAY, lastYear: 365 * DAY } as const;

/**
 * Messages between two chains (either side may be left open: `all`) in rolling windows at `at`:
 * the ICM series' hourly counts (the messages the ICM listing serves) added up over each window.
 */
export function icmSummary(world: World, network: Network, q: { srcBlockchainId?: string; destBlockchainId?: string }, at: number): Record<string, number | string> {
  const counts = icmOf(world).counts(stakingNetwork(network), { ...q, timeInterval: 'hour', groupBy: '' }, at);
  const out: Record<string, number | string> = {};
  const current = Math.floor(at / HOUR) * HOUR;
  for (const [name, seconds] of Object.entries(ICM_WINDOWS)) out[name] = counts.filter((c) => c.timestamp > current - seconds).reduce((a, c) => a + c.value, 0);
  out.allTime = counts.reduce((a, c) => a + c.value, 0);
  out.srcBlockchainId = q.srcBlockchainId ?? 'all';
  out.destBlockchainId = q.destBlockchainId ?? 'all';
  return out;
}

function icmSummaryRoute(ctx: RouteContext): unknown {
  const q = ctx.query;
  const network = networkParam(single(q, 'network') ?? 'mainnet');
  // Checked as the series checks it; the published answer is one object whatever it says.
  enumParam(q, 'groupBy', ICM_GROUP_BY);
  const src = single(q, 'srcBlockchainId');
  const dest = single(q, 'destBlockchainId');
  return { result: icmSummary(ctx.world, network, { ...(src ? { srcBlockchainId: src } : {}), ...(dest ? { destBlockchainId: dest } : {}) }, ctx.world.now) };
}

/** An L1 validation's owner addresses, with the validation as its sort key. */
export interface ValidatorAddresses {
  addresses: string[];
  sortKey: string;
}

/**
 * The L1 validations of a subnet that were active at some time in [start, end) (active from their
 * creation until their balance ran out), as `at` knows them, oldest first: each its
 * remaining-balance owners (what l1Validators lists) under its validation id.
 */
export function validatorAddresses(world: World, network: Network, subnetId: string, range: { startTimestamp?: number; endTimestamp?: number }, at: number): ValidatorAddresses[] {
  const vw = validatorWorld(world);
  const fees = new Map(vw.l1Fees(network).map((f) => [f.validationId, f]));
  const start = range.startTimestamp ?? 0;
  const end = Math.min(range.endTimestamp ?? Infinity, at + 1);
  return [...iterate(vw.listL1Validators(network, { subnetId, includeInactiveL1Validators: true }, at))]
    .filter((v) => {
      const f = fees.get(v.validationId)!;
      const dry = f.rate > 0n ? f.creation + Number((f.balance + f.rate - 1n) / f.rate) : Infinity;
      return v.creationTimestamp < end && dry > start;
    })
    .sort((a, b) => a.creationTimestamp - b.creationTimestamp || (a.validationId < b.validationId ? -1 : 1))
    .map((v) => ({ addresses: [...v.remainingBalanceOwner.addresses], sortKey: v.validationId }));
}

function validatorAddressesRoute(ctx: RouteContext): unknown {
  const q = ctx.query;
  const subnetId = ctx.params[0]!;
  const network = networkParam(single(q, 'network') ?? 'mainnet');
  const startTimestamp = intParam(q, 'startTimestamp', 0, Number.MAX_SAFE_INTEGER);
  const endTimestamp = intParam(q, 'endTimestamp', 0, Number.MAX_SAFE_INTEGER);
  if (startTimestamp !== undefined && endTimestamp !== undefined && startTimestamp > endTimestamp) throw badRequest('startTimestamp must not be greater than endTimestamp');
  const pageSize = intParam(q, 'pageSize', 1, 5000, 1000)!;
  const range = { ...(startTimestamp !== undefined ? { startTimestamp } : {}), ...(endTimestamp !== undefined ? { endTimestamp } : {}) };
  const key = JSON.stringify(['validatorAddresses', network, subnetId, range]);
  const { items, nextPageToken } = pageAt(ctx, key, pageSize, 'metrics', (at) => fromArray(validatorAddresses(ctx.world, network, subnetId, range, at)));
  return nextPageToken === undefined ? { addresses: items } : { nextPageToken, addresses: items };
}

/** BTC.b has 8 decimals: amounts are satoshis. */
const BTCB_MAX_SATS = 5_000_000_000;

/**
 * The C-Chain addresses that bridged BTC.b, with what they bridged (satoshis, as text) as the sort
 * key: the chain's wallets, each a fixed amount of the seed; largest first, at or above `threshold`.
 */
export function btcbBridgers(world: World, threshold: bigint): Array<{ address: string; sortKey: string }> {
  return world.evm.walletsOf('43114')
    .map((w) => ({ address: w.address, sortKey: String(Rng.of(world.seed, 'btcb', w.address).int(BTCB_MAX_SATS)) }))
    .filter((a) => BigInt(a.sortKey) >= threshold)
    .sort((a, b) => Number(BigInt(b.sortKey) - BigInt(a.sortKey)) || (a.address < b.address ? -1 : 1));
}

function btcbRoute(ctx: RouteContext): unknown {
  const raw = single(ctx.query, 'threshold');
  if (raw === undefined) throw badRequest('threshold is required');
  if (!/^[0-9]{1,30}$/.test(raw)) throw badRequest(`threshold must be a whole number of satoshis, got "${raw}"`);
  const pageSize = intParam(ctx.query, 'pageSize', 1, 5000, 1000)!;
  const key = JSON.stringify(['btcbBridgers', raw]);
  const { items, nextPageToken } = pageAt(ctx, key, pageSize, 'metrics', () => fromArray(btcbBridgers(ctx.world, BigInt(raw))));
  return nextPageToken === undefined ? { addresses: items } : { nextPageToken, addresses: items };
}

function metricsChainsRoute(ctx: RouteContext): unknown {
  const network = enumParam(ctx.query, 'network', ['mainnet', 'fuji', 'testnet'] as const);
  return { chains: metricsChains(ctx.world, network) };
}

// ---- data service ----

/** The chains whose world holds the address (a wallet, a token or named contract, an active address). */
export function chainsOfAddress(evm: EvmWorld, address: string): ChainInfo[] {
  const a = address.toLowerCase();
  const has = (list: readonly { address: string }[]) => list.some((x) => x.address.toLowerCase() === a);
  return evm.chains.filter((c) => has(evm.walletsOf(c.chainId)) || has(evm.contractsOf(c.chainId)) || has(evm.namedOf(c.chainId)) || evm.owner(c.chainId, a) !== undefined);
}

function addressEvmChains(ctx: RouteContext): unknown {
  const address = evmAddress(ctx.params[0]!, 'address');
  const ids = new Set(chainsOfAddress(ctx.world.evm, address).map((c) => c.chainId));
  return { indexedChains: ctx.world.supportedChains().filter((c) => ids.has(c.chainId)), unindexedChains: [] };
}

export type NftToken = Erc721Token | Erc1155Token;

const tokenMemo = new WeakMap<EvmWorld, Map<string, NftToken[]>>();

/**
 * An NFT collection's tokens at `at`: each token id its transfers carry, in the order first
 * transferred, as its transfers carry it; an ERC-721 token with the owner its newest transfer left it with.
 */
export function collectionTokens(evm: EvmWorld, chain: ChainInfo, contract: string, at: number): NftToken[] {
  const c = evm.contract(chain.chainId, contract);
  if (!c || c.ercType === 'ERC-20') return [];
  const visible = evm.transferCount(chain.chainId, c.address, at);
  const key = `${chain.chainId}:${c.address}:${visible}:${headAt(chain, at)}`;
  let byKey = tokenMemo.get(evm);
  if (!byKey) tokenMemo.set(evm, (byKey = new Map()));
  return memoized(byKey, 16, key, () => tokensOf(evm, chain, c.address, visible));
}

/** The tokens of the collection `contract`'s first `visible` transfers, in the order first transferred. */
function tokensOf(evm: EvmWorld, chain: ChainInfo, contract: string, visible: number): NftToken[] {
  const tokens = new Map<string, NftToken>();
  for (let i = 0; i < visible; i++) {
    const t = evm.transferAt(chain.chainId, contract, i);
    if ('erc721Token' in t) {
      const { ownerAddress: _o, ...token } = t.erc721Token;
      tokens.delete(token.tokenId);
      tokens.set(token.tokenId, { ...token, ownerAddress: t.to.address });
    } else if ('erc1155Token' in t && !tokens.has(t.erc1155Token.tokenId)) {
      tokens.set(t.erc1155Token.tokenId, { ...t.erc1155Token });
    }
  }
  // First transferred first: a re-transferred ERC-721 keeps its place.
  const first = new Map<string, number>();
  for (let i = 0; i < visible; i++) {
    const t = evm.transferAt(chain.chainId, contract, i);
    const id = 'erc721Token' in t ? t.erc721Token.tokenId : 'erc1155Token' in t ? t.erc1155Token.tokenId : undefined;
    if (id !== undefined && !first.has(id)) first.set(id, i);
  }
  return [...tokens.values()].sort((a, b) => first.get(a.tokenId)! - first.get(b.tokenId)!);
}

function nftTokens(ctx: RouteContext): unknown {
  const chain = dataChain(ctx, ctx.params[0]!);
  const address = evmAddress(ctx.params[1]!, 'address');
  const pageSize = intParam(ctx.query, 'pageSize', 1, 100, 10)!;
  const key = JSON.stringify(['nftTokens', chain.chainId, address]);
  return dataPage(ctx, 'tokens', key, (w): Listing<NftToken> => fromArray(collectionTokens(w.evm, chain, address, w.now)), pageSize);
}

/** An address's last activity on a primary-network chain (LastActivityTimestamp). */
export interface LastActivity {
  timestamp: number;
  blockNumber: string;
  txHash: string;
  utxoId: string;
  isConsumed: boolean;
  chainName: 'p-chain';
  network: 'mainnet' | 'fuji';
}

/**
 * The newest P-Chain transaction of any of the addresses at `t` (the newest the transactions listing
 * serves them): a UTXO of theirs it created, else one it consumed. None for addresses without one.
 */
export function lastActivity(seed: number, network: Network, addresses: readonly string[], t: number): LastActivity | undefined {
  const listing = primaryWorld(seed).listTransactions(network, { addresses }, t);
  if (listing.length === 0) return undefined;
  const tx = listing.at(0);
  const bodies = new Set(addresses.map(addressBody));
  const theirs = (u: { addresses: string[] }) => u.addresses.some((a) => bodies.has(addressBody(a)));
  const created = tx.emittedUtxos.find(theirs);
  const utxo = created ?? tx.consumedUtxos.find(theirs);
  return {
    timestamp: tx.blockTimestamp, blockNumber: tx.blockNumber, txHash: tx.txHash, utxoId: utxo?.utxoId ?? '', isConsumed: created === undefined,
    chainName: 'p-chain', network: network === 'mainnet' ? 'mainnet' : 'fuji',
  };
}

function lastActivityRoute(ctx: RouteContext): unknown {
  const network = networkParam(ctx.params[0]!);
  const chain = ctx.params[1]!;
  if (chain !== P_CHAIN_ID && chain !== 'p-chain') throw notFound(`blockchainId ${chain}: the simulator serves the P-Chain's last activity only (p-chain or ${P_CHAIN_ID})`);
  const { query } = txFilters(ctx.query, network);
  if (!query.addresses || query.addresses.length === 0) throw badRequest('addresses is required');
  const found = lastActivity(ctx.world.seed, network, query.addresses, ctx.world.now);
  if (!found) throw notFound(`no activity of ${query.addresses.join(',')} on the P-Chain`);
  return found;
}

export const LOOKUP_ROUTES: RouteTable = [
  { pattern: ['v2', 'chains'], route: { name: 'metricsChains', service: 'metrics', weight: WEIGHTS.metricsChains, handle: metricsChainsRoute } },
  { pattern: ['v2', 'chains', null, 'rollingWindowMetrics', null], route: { name: 'rollingWindowMetrics', service: 'metrics', weight: WEIGHTS.rollingWindowMetrics, handle: rollingWindowMetrics } },
  { pattern: ['v2', 'icm', 'summary'], route: { name: 'icmSummary', service: 'metrics', weight: WEIGHTS.icmSummary, handle: icmSummaryRoute } },
  { pattern: ['v2', 'subnets', null, 'validators:getAddresses'], route: { name: 'validatorAddresses', service: 'metrics', weight: WEIGHTS.validatorAddresses, handle: validatorAddressesRoute } },
  { pattern: ['v2', 'chains', '43114', 'btcb', 'bridged:getAddresses'], route: { name: 'btcbBridgers', service: 'metrics', weight: WEIGHTS.btcbBridgers, handle: btcbRoute } },
  { pattern: ['v1', 'address', null, 'chains'], route: { name: 'addressEvmChains', service: 'data', weight: WEIGHTS.addressEvmChains, handle: addressEvmChains } },
  { pattern: ['v1', 'chains', null, 'nfts', 'collections', null, 'tokens'], route: { name: 'nftTokens', service: 'data', weight: WEIGHTS.nftTokens, handle: nftTokens } },
  { pattern: ['v1', 'networks', null, 'blockchains', null, 'lastActivityTimestampByAddresses'], route: { name: 'lastActivity', service: 'data', weight: WEIGHTS.lastActivity, handle: lastActivityRoute } },
];
