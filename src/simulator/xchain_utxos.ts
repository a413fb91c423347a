// Balances and UTXOs of X-Chain addresses as the data service answers them (getBalancesByAddresses,
// getUtxosByAddresses on x-chain), and the node's avm.getUTXOs of the same addresses: one set, the
// outputs the X-Chain transactions listing (primary_xc.ts) emitted to an address on the X-Chain that
// none of its transactions consumed. The node's own addresses hold the UTXOs they were given
// (node_utxos.ts), as the listing makes each of them in a transaction of its own.
import type { Network } from '../ids.js';
import { X_CHAIN } from './primary.js';
import { atomicWorld, type XChainTransaction, type XcUtxo } from './primary_xc.js';
import { addressBody, stakingNetwork, type AssetAmount } from './staking.js';
import { encodeUtxo, type SimUtxo } from './utxo_codec.js';

/** The UTXOs of addresses at a time: what they hold, and what they held and spent. */
export interface AddressUtxos<U> {
  /** held at t */
  held: U[];
  /** held once and spent by t, with what spent them */
  spent: U[];
}

type XAddressUtxos = AddressUtxos<XcUtxo>;

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
