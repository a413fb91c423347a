// Balances and UTXOs of X-Chain addresses as the data service answers them (getBalancesByAddresses,
// getUtxosByAddresses on x-chain), and the node's avm.getUTXOs of the same addresses: one set, the
// outputs the X-Chain transactions listing (primary_xc.ts) emitted to an address on the X-Chain that
// none of its transactions consumed. The node's own addresses hold the UTXOs they were given
// (node_utxos.ts), as the listing makes each of them in a transaction of its own.
import type { Network } from '../ids.js';
import { badRequest } from './errors.js';
import { fromArray, type Listing } from './listing.js';
import { addressesParam, booleanParam, enumParam, intParam, networkParam, pageAt, single } from './params.js';
import { X_CHAIN } from './primary.js';
import { atomicWorld, type XChainTransaction, type XcUtxo } from './primary_xc.js';
import type { RouteContext } from './route.js';
import { addressBody, stakingNetwork, type AssetAmount } from './staking.js';
import { encodeUtxo, type SimUtxo } from './utxo_codec.js';

export interface XAddressUtxos {
  /** held at t */
  held: XcUtxo[];
  /** held once and spent by t (or consumed by the address's transactions), with what spent them */
  spent: XcUtxo[];
}

const cache = new Map<string, XAddressUtxos>();

/** The X-Chain UTXOs of some addresses (any of them an owner) at time t. */
export function xUtxosOf(seed: number, network: Network, addresses: readonly string[], t: number): XAddressUtxos {
  const want = new Set(addresses.map(addressBody));
  const key = JSON.stringify([seed, network, [...want].sort(), t]);
  const hit = cache.get(key);
  if (hit) return hit;
  const here = X_CHAIN[stakingNetwork(network)];
  const owned = (u: XcUtxo) => u.addresses.some((a) => want.has(addressBody(a)));
  const listing = atomicWorld(seed, 'x').listTransactions<XChainTransaction>(network, { addresses: [...want] }, t);
  const emitted = new Map<string, XcUtxo>();
  const consumed = new Map<string, XcUtxo>();
  for (let k = 0; k < listing.length; k++) {
    const tx = listing.at(k);
    for (const u of tx.emittedUtxos) if (owned(u) && u.consumedOnChainId === here) emitted.set(u.utxoId, u);
    for (const u of tx.consumedUtxos) if (owned(u)) consumed.set(u.utxoId, u);
  }
  const held = [...emitted.values()].filter((u) => !consumed.has(u.utxoId) && u.consumingTxHash === undefined);
  const out = { held, spent: [...consumed.values()] };
  if (cache.size > 64) cache.clear();
  cache.set(key, out);
  return out;
}

/** An X-Chain UTXO of the data service as the node's codec writes it (the same output, the same owners). */
export function nodeForm(u: XcUtxo): SimUtxo {
  const base = {
    txId: u.creationTxHash, outputIndex: Number(u.outputIndex), assetId: u.asset.assetId, amount: u.asset.amount, locktime: String(u.locktime),
    threshold: u.threshold, owners: u.addresses.map((a) => `X-${addressBody(a)}`),
  };
  return { ...base, ...encodeUtxo(base) };
}

interface AggregatedAssetAmount extends AssetAmount {
  utxoCount: number;
}

/** The XChainBalances of held UTXOs at t: locked (a locktime after t) and unlocked, one entry per asset. */
export function xBalancesOf(held: readonly XcUtxo[], t: number): { locked: AggregatedAssetAmount[]; unlocked: AggregatedAssetAmount[]; atomicMemoryUnlocked: []; atomicMemoryLocked: [] } {
  const out = { locked: [] as AggregatedAssetAmount[], unlocked: [] as AggregatedAssetAmount[], atomicMemoryUnlocked: [] as [], atomicMemoryLocked: [] as [] };
  const sums = new Map<string, AggregatedAssetAmount>();
  for (const u of held) {
    const category = BigInt(String(u.locktime)) > BigInt(t) ? 'locked' : 'unlocked';
    const k = `${category}:${u.asset.assetId}`;
    let e = sums.get(k);
    if (!e) {
      e = { ...u.asset, amount: '0', utxoCount: 0 };
      out[category].push(e);
      sums.set(k, e);
    }
    e.amount = (BigInt(e.amount) + BigInt(u.asset.amount)).toString();
    e.utxoCount++;
  }
  return out;
}

// ---- routes (the P-Chain's in platform_balances.ts hand x-chain here) ----

/** Whether the path names the X-Chain (x-chain or its id on the path's network). */
export function namesXChain(ctx: RouteContext): boolean {
  const chain = ctx.params[1]!;
  if (chain === 'x-chain') return true;
  const network = networkParam(ctx.params[0]!);
  return chain === X_CHAIN[stakingNetwork(network)];
}

function requiredAddresses(ctx: RouteContext, network: Network): string[] {
  const addresses = addressesParam(ctx.query, 'addresses', network);
  if (!addresses) throw badRequest('addresses is required: a comma-separated list of X-Chain addresses');
  return addresses;
}

export function xBalances(ctx: RouteContext): unknown {
  const network = networkParam(ctx.params[0]!);
  const addresses = requiredAddresses(ctx, network);
  const at = intParam(ctx.query, 'blockTimestamp', 0);
  const t = at === undefined ? ctx.world.now : Math.min(at, ctx.world.now);
  return { balances: xBalancesOf(xUtxosOf(ctx.world.seed, network, addresses, t).held, t), chainInfo: { chainName: 'x-chain', network } };
}

export function xUtxos(ctx: RouteContext): unknown {
  const network = networkParam(ctx.params[0]!);
  const q = ctx.query;
  const addresses = requiredAddresses(ctx, network);
  const assetId = single(q, 'assetId');
  const includeSpent = booleanParam(q, 'includeSpent') ?? false;
  const sortBy = enumParam(q, 'sortBy', ['timestamp', 'amount'] as const) ?? 'timestamp';
  const sortOrder = enumParam(q, 'sortOrder', ['asc', 'desc'] as const) ?? 'desc';
  const pageSize = intParam(q, 'pageSize', 1, 100, 10)!;
  const key = JSON.stringify(['xUtxos', network, [...addresses].sort(), assetId ?? null, includeSpent, sortBy, sortOrder]);
  const list = (t: number): Listing<XcUtxo> => {
    const { held, spent } = xUtxosOf(ctx.world.seed, network, addresses, t);
    const items = (includeSpent ? [...held, ...spent] : held).filter((u) => assetId === undefined || u.asset.assetId === assetId);
    const by = (u: XcUtxo) => (sortBy === 'amount' ? BigInt(u.asset.amount) : BigInt(u.timestamp));
    const sign = sortOrder === 'asc' ? 1 : -1;
    items.sort((a, b) => {
      const x = by(a);
      const y = by(b);
      return x !== y ? (x < y ? -sign : sign) : a.utxoId < b.utxoId ? -1 : a.utxoId > b.utxoId ? 1 : 0;
    });
    return fromArray(items);
  };
  const { items, nextPageToken } = pageAt(ctx, key, pageSize, 'data', list);
  const body = { utxos: items, chainInfo: { chainName: 'x-chain', network } };
  return nextPageToken === undefined ? body : { nextPageToken, ...body };
}
