// Balances and UTXOs of P-Chain addresses as the data service answers them (getBalancesByAddresses,
// getUtxosByAddresses), derived from the platform chain of primary.ts so that they agree with what
// its transactions listing says: the addresses hold the UTXOs their transactions emitted to them
// that none of their transactions consumed, and the balances are the sums of those by category. The
// world does not say which RewardValidatorTx returns a stake, so a stake whose period has ended is
// taken as spent then (listed with includeSpent, with its end as the consuming time and no
// consuming transaction).
import { isBlockchainId, type Network } from '../ids.js';
import { badRequest } from './errors.js';
import { fromArray, type Listing } from './listing.js';
import { memoized } from './hash.js';
import { addressesParam, booleanParam, enumParam, intParam, networkParam, pageAt, single } from './params.js';
import { P_CHAIN_ID, primaryWorld, type PChainUtxo } from './primary.js';
import { pathChain } from './primary_routes.js';
import { WEIGHTS } from './ratelimit.js';
import type { RouteContext, RouteTable } from './route.js';
import { addressBody, type AssetAmount } from './staking.js';
import { C_CHAIN, X_CHAIN } from './primary.js';
import { xBalancesOf, xUtxosOf, type AddressUtxos } from './xchain_utxos.js';
import { atomicWorld, fromP, type CChainAtomicTransaction, type XcUtxo } from './primary_xc.js';
import { stakingNetwork } from './staking.js';

/** The categories of a P-Chain balance (the OpenAPI's PChainBalance), in its order. */
export const BALANCE_CATEGORIES = [
  'unlockedUnstaked', 'unlockedStaked', 'lockedPlatform', 'lockedStakeable', 'lockedStaked', 'pendingStaked', 'atomicMemoryUnlocked', 'atomicMemoryLocked',
] as const;
export type BalanceCategory = (typeof BALANCE_CATEGORIES)[number];

/**
 * `status` of an atomic-memory balance: the OpenAPI gives it as free text without values; the
 * simulator says what its UTXOs are (exports waiting to be imported).
 */
export const ATOMIC_STATUS = 'exported';

export interface AggregatedAssetAmount extends AssetAmount {
  utxoCount: number;
  sharedWithChainId?: string;
  status?: string;
}

export type PChainBalance = Record<BalanceCategory, AggregatedAssetAmount[]>;


const cache = new Map<string, AddressUtxos<PChainUtxo>>();

/** The UTXOs of some addresses (any of them an owner) at time t, as the P-Chain world has them. */
export function utxosOf(seed: number, network: Network, addresses: readonly string[], t: number): AddressUtxos<PChainUtxo> {
  const want = new Set(addresses.map(addressBody));
  const key = JSON.stringify([seed, network, [...want].sort(), t]);
  const hit = cache.get(key);
  if (hit) return hit;
  const owned = (u: PChainUtxo) => u.addresses.some((a) => want.has(addressBody(a)));
  const listing = primaryWorld(seed).listTransactions(network, { addresses: [...want] }, t);
  const emitted = new Map<string, PChainUtxo>();
  const consumed = new Map<string, PChainUtxo>();
  for (let k = 0; k < listing.length; k++) {
    const tx = listing.at(k);
    for (const u of tx.emittedUtxos) if (owned(u)) emitted.set(u.utxoId, u);
    for (const u of tx.consumedUtxos) if (owned(u)) consumed.set(u.utxoId, u);
  }
  const held: PChainUtxo[] = [];
  const spent: PChainUtxo[] = [...consumed.values()];
  for (const u of emitted.values()) {
    if (consumed.has(u.utxoId)) continue;
    if (u.staked && u.utxoEndTimestamp !== undefined && u.utxoEndTimestamp <= t) spent.push({ ...u, consumingBlockTimestamp: u.utxoEndTimestamp });
    else held.push(u);
  }
  const out = { held, spent };
  if (cache.size > 64) cache.clear();
  cache.set(key, out);
  return out;
}

/** Which balance a held UTXO counts in at time t (PChainBalance's descriptions). */
export function categoryOf(u: PChainUtxo, t: number): BalanceCategory {
  if (u.consumedOnChainId !== P_CHAIN_ID) return u.platformLocktime > t ? 'atomicMemoryLocked' : 'atomicMemoryUnlocked';
  const stakeLocked = (u.stakeableLocktime ?? 0) > t;
  if (u.staked) return (u.utxoStartTimestamp ?? 0) > t ? 'pendingStaked' : stakeLocked ? 'lockedStaked' : 'unlockedStaked';
  if (u.platformLocktime > t) return 'lockedPlatform';
  return stakeLocked ? 'lockedStakeable' : 'unlockedUnstaked';
}

/** The balances of held UTXOs at t: per category, one entry per asset (and chain shared with). */
export function balancesOf(held: readonly PChainUtxo[], t: number): PChainBalance {
  const out = Object.fromEntries(BALANCE_CATEGORIES.map((c) => [c, []])) as unknown as PChainBalance;
  const sums = new Map<string, { entry: AggregatedAssetAmount; total: bigint }>();
  for (const u of held) {
    const category = categoryOf(u, t);
    const atomic = category.startsWith('atomic');
    const k = JSON.stringify([category, u.asset.assetId, atomic ? u.consumedOnChainId : '']);
    let s = sums.get(k);
    if (!s) {
      const { assetId, name, symbol, denomination, type } = u.asset;
      const entry: AggregatedAssetAmount = { assetId, name, symbol, denomination, type: type as 'secp256k1', amount: '0', utxoCount: 0 };
      if (atomic) Object.assign(entry, { sharedWithChainId: u.consumedOnChainId, status: ATOMIC_STATUS });
      out[category].push(entry);
      sums.set(k, (s = { entry, total: 0n }));
    }
    s.total += BigInt(u.asset.amount);
    s.entry.amount = s.total.toString();
    s.entry.utxoCount++;
  }
  return out;
}

// ---- routes ----

/** The addresses asked (`chain` names their chain in the refusal of none). */
function requiredAddresses(ctx: RouteContext, network: Network, chain = 'P-Chain'): string[] {
  const addresses = addressesParam(ctx.query, 'addresses', network);
  if (!addresses) throw badRequest(`addresses is required: a comma-separated list of ${chain} addresses`);
  return addresses;
}

function balances(ctx: RouteContext): unknown {
  const xc = xcChainOf(ctx);
  if (xc) return xcBalances(ctx, xc);
  const network = pathChain(ctx);
  const addresses = requiredAddresses(ctx, network);
  const at = intParam(ctx.query, 'blockTimestamp', 0);
  // A time ahead of the chain is answered as of its newest block.
  const t = at === undefined ? ctx.world.now : Math.min(at, ctx.world.now);
  const { held } = utxosOf(ctx.world.seed, network, addresses, t);
  return { balances: balancesOf(held, t), chainInfo: { chainName: 'p-chain', network } };
}


/** A non-negative JSON number (the OpenAPI's minUtxoAmount, nAVAX): the least whole amount it admits. */
function minAmountParam(q: URLSearchParams): bigint | undefined {
  const raw = single(q, 'minUtxoAmount');
  if (raw === undefined) return undefined;
  const m = /^([0-9]+)(?:\.([0-9]+))?$/.exec(raw);
  if (!m) throw badRequest(`minUtxoAmount must be a non-negative number, got "${raw}"`);
  return BigInt(m[1]!) + (m[2] && /[1-9]/.test(m[2]) ? 1n : 0n);
}

/** UTXOs in the order asked (`by` their amount or time), ties by id: a listing that pages the same way each time. */
export function sortedUtxos<U extends { utxoId: string }>(items: U[], by: (u: U) => bigint, sortOrder: 'asc' | 'desc'): Listing<U> {
  const sign = sortOrder === 'asc' ? 1 : -1;
  // Each item's key made once, not at each of its comparisons.
  const keyed = items.map((u) => ({ u, k: by(u) }));
  keyed.sort((a, b) => (a.k !== b.k ? (a.k < b.k ? -sign : sign) : a.u.utxoId < b.u.utxoId ? -1 : a.u.utxoId > b.u.utxoId ? 1 : 0));
  return fromArray(keyed.map((x) => x.u));
}

/**
 * The sorted UTXO listings of the last queries (seed, route, network, addresses, filters, order)
 * and times: each page of one would otherwise sort all of them again.
 */
const LISTINGS = new Map<string, Listing<PChainUtxo>>();
const XC_LISTINGS = new Map<string, Listing<XcUtxo>>();
const LISTINGS_KEPT = 64;

export const SORT_BY = ['timestamp', 'amount'] as const;
export const SORT_ORDER = ['asc', 'desc'] as const;

function utxos(ctx: RouteContext): unknown {
  const xc = xcChainOf(ctx);
  if (xc) return xcUtxos(ctx, xc);
  const network = pathChain(ctx);
  const q = ctx.query;
  const addresses = requiredAddresses(ctx, network);
  const assetId = single(q, 'assetId');
  if (assetId !== undefined && !isBlockchainId(assetId)) throw badRequest(`assetId must be an asset id (cb58 of 32 bytes), got "${assetId}"`);
  const minAmount = minAmountParam(q);
  const includeSpent = booleanParam(q, 'includeSpent') ?? false;
  const sortBy = enumParam(q, 'sortBy', SORT_BY) ?? 'timestamp';
  const sortOrder = enumParam(q, 'sortOrder', SORT_ORDER) ?? 'desc';
  const pageSize = intParam(q, 'pageSize', 1, 100, 10)!;
  const key = JSON.stringify(['primaryUtxos', network, [...addresses].sort(), assetId ?? null, String(minAmount ?? ''), includeSpent, sortBy, sortOrder]);
  const list = (t: number): Listing<PChainUtxo> => memoized(LISTINGS, LISTINGS_KEPT, `${ctx.world.seed}:${key}@${t}`, () => {
    const { held, spent } = utxosOf(ctx.world.seed, network, addresses, t);
    const items = (includeSpent ? [...held, ...spent] : held).filter(
      (u) => (assetId === undefined || u.asset.assetId === assetId) && (minAmount === undefined || BigInt(u.asset.amount) >= minAmount),
    );
    return sortedUtxos(items, (u) => (sortBy === 'amount' ? BigInt(u.asset.amount) : BigInt(u.blockTimestamp)), sortOrder);
  });
  const { items, nextPageToken } = pageAt(ctx, key, pageSize, 'data', list);
  const body = { utxos: items, chainInfo: { chainName: 'p-chain', network } };
  return nextPageToken === undefined ? body : { nextPageToken, ...body };
}


// ---- the X- and C-Chain's (xchain_utxos.ts has the X-Chain's world; the C-Chain's is below) ----

/** Which of the X- and C-Chain the path names (its alias, or its id on the path's network), if either. */
function xcChainOf(ctx: RouteContext): 'x' | 'c' | undefined {
  const chain = ctx.params[1]!;
  if (chain === 'x-chain' || chain === 'c-chain') return chain === 'x-chain' ? 'x' : 'c';
  const net = stakingNetwork(networkParam(ctx.params[0]!));
  return chain === X_CHAIN[net] ? 'x' : chain === C_CHAIN[net] ? 'c' : undefined;
}

/** The X-Chain's balances, or the C-Chain's atomic memory's: each its own shape, one query. */
function xcBalances(ctx: RouteContext, chain: 'x' | 'c'): unknown {
  const network = networkParam(ctx.params[0]!);
  const addresses = requiredAddresses(ctx, network, chain === 'x' ? 'X-Chain' : 'C-Chain (bech32)');
  const at = intParam(ctx.query, 'blockTimestamp', 0);
  const t = at === undefined ? ctx.world.now : Math.min(at, ctx.world.now);
  const balances = chain === 'x' ? xBalancesOf(xUtxosOf(ctx.world.seed, network, addresses, t).held, t) : cBalancesOf(cUtxosOf(ctx.world.seed, network, addresses, t).held, t);
  return { balances, chainInfo: { chainName: chain === 'x' ? 'x-chain' : 'c-chain', network } };
}

/** The X-Chain's UTXOs, or the C-Chain's in atomic memory: one shape (the OpenAPI's Utxo), one query. */
function xcUtxos(ctx: RouteContext, chain: 'x' | 'c'): unknown {
  const network = networkParam(ctx.params[0]!);
  const q = ctx.query;
  const addresses = requiredAddresses(ctx, network, chain === 'x' ? 'X-Chain' : 'C-Chain (bech32)');
  const assetId = single(q, 'assetId');
  const includeSpent = booleanParam(q, 'includeSpent') ?? false;
  const sortBy = enumParam(q, 'sortBy', SORT_BY) ?? 'timestamp';
  const sortOrder = enumParam(q, 'sortOrder', SORT_ORDER) ?? 'desc';
  const pageSize = intParam(q, 'pageSize', 1, 100, 10)!;
  const key = JSON.stringify([`${chain}Utxos`, network, [...addresses].sort(), assetId ?? null, includeSpent, sortBy, sortOrder]);
  const list = (t: number): Listing<XcUtxo> => memoized(XC_LISTINGS, LISTINGS_KEPT, `${ctx.world.seed}:${key}@${t}`, () => {
    const { held, spent } = (chain === 'x' ? xUtxosOf : cUtxosOf)(ctx.world.seed, network, addresses, t);
    const items = (includeSpent ? [...held, ...spent] : held).filter((u) => assetId === undefined || u.asset.assetId === assetId);
    return sortedUtxos(items, (u) => (sortBy === 'amount' ? BigInt(u.asset.amount) : BigInt(u.timestamp)), sortOrder);
  });
  const { items, nextPageToken } = pageAt(ctx, key, pageSize, 'data', list);
  const body = { utxos: items, chainInfo: { chainName: chain === 'x' ? 'x-chain' : 'c-chain', network } };
  return nextPageToken === undefined ? body : { nextPageToken, ...body };
}

// ---- the C-Chain's: its atomic memory only (the EVM balances are the chain's own listings) ----

const cCache = new Map<string, AddressUtxos<XcUtxo>>();

/**
 * The UTXOs in the C-Chain's atomic memory of some addresses at t: the outputs P-Chain ExportTxs
 * sent them to the C-Chain (the P-Chain world's), held until the C-Chain ImportTx that takes them
 * (primary_xc.ts) is accepted, then spent by it: the same UTXOs, as that import lists them.
 */
export function cUtxosOf(seed: number, network: Network, addresses: readonly string[], t: number): AddressUtxos<XcUtxo> {
  const key = JSON.stringify([seed, network, [...new Set(addresses.map(addressBody))].sort(), t]);
  const hit = cCache.get(key);
  if (hit) return hit;
  const here = C_CHAIN[stakingNetwork(network)];
  const exported = utxosOf(seed, network, addresses, t).held.filter((u) => u.consumedOnChainId === here);
  const imports = atomicWorld(seed, 'c').listTransactions<CChainAtomicTransaction>(network, { addresses: [...addresses], txTypes: ['ImportTx'] }, t);
  const taken = new Map<string, XcUtxo>();
  for (let k = 0; k < imports.length; k++) for (const u of imports.at(k).consumedUtxos ?? []) taken.set(u.utxoId, u);
  const out = {
    held: exported.filter((u) => !taken.has(u.utxoId)).map((u) => fromP(u, here)),
    spent: exported.filter((u) => taken.has(u.utxoId)).map((u) => taken.get(u.utxoId)!),
  };
  if (cCache.size > 64) cCache.clear();
  cCache.set(key, out);
  return out;
}

interface CChainSharedAssetBalance extends AssetAmount {
  utxoCount: number;
  sharedWithChainId: string;
}

/** The CChainAtomicBalances of held atomic UTXOs at t: per asset and chain shared with, locked by a locktime after t or not. */
export function cBalancesOf(held: readonly XcUtxo[], t: number): { atomicMemoryUnlocked: CChainSharedAssetBalance[]; atomicMemoryLocked: CChainSharedAssetBalance[] } {
  const out = { atomicMemoryUnlocked: [] as CChainSharedAssetBalance[], atomicMemoryLocked: [] as CChainSharedAssetBalance[] };
  const sums = new Map<string, CChainSharedAssetBalance>();
  for (const u of held) {
    const category = BigInt(String(u.locktime)) > BigInt(t) ? 'atomicMemoryLocked' : 'atomicMemoryUnlocked';
    const k = JSON.stringify([category, u.asset.assetId, u.createdOnChainId]);
    let e = sums.get(k);
    if (!e) {
      e = { ...u.asset, amount: '0', utxoCount: 0, sharedWithChainId: u.createdOnChainId };
      out[category].push(e);
      sums.set(k, e);
    }
    e.amount = (BigInt(e.amount) + BigInt(u.asset.amount)).toString();
    e.utxoCount++;
  }
  return out;
}

export const PLATFORM_BALANCE_ROUTES: RouteTable = [
  { pattern: ['v1', 'networks', null, 'blockchains', null, 'balances'], route: { name: 'primaryBalances', service: 'data', weight: WEIGHTS.primaryBalances, handle: balances } },
  { pattern: ['v1', 'networks', null, 'blockchains', null, 'utxos'], route: { name: 'primaryUtxos', service: 'data', weight: WEIGHTS.primaryUtxos, handle: utxos } },
];
