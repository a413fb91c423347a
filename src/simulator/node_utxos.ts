// The asset chain's addresses, assets and the UTXOs its addresses were first given, as the node
// (node_world.ts) and the data service (primary_xc.ts) both see them: the data service lists the
// transaction that made each of these UTXOs (one world), so they live here, below both.
import { cb58Encode, encodePrimaryAddress } from '../ids.js';
import { ExactNumber } from '../json.js';
import { WORLD_NOW } from './evm.js';
import { Rng, id32, labelBytes } from './hash.js';
import { encodeUtxo, type SimUtxo } from './utxo_codec.js';

const DAY = 86_400;
/** The asset chain's own asset. */
export const AVAX_ASSET_ID = 'FvwEAhmxKfeiG8SnEvq42hc6whRyY3EFYAvebMqDNDGCgxN5Z';
export const UINT64_MAX = 18446744073709551615n;
/** 2^53 + 1: the smallest integer a double cannot hold. */
export const FIRST_INEXACT = 9_007_199_254_740_993n;
/** Addresses of the asset chain with UTXOs and activity. */
export const X_ADDRESSES = 6;

export function xAddress(i: number): string {
  return encodePrimaryAddress('mainnet', labelBytes(`xaddr:${i}`, 20), 'X');
}

/** Generated assets of the asset chain, besides AVAX: name, symbol, denomination. */
export const ASSET_NAMES: Array<[string, string, number]> = [
  ['Lake Coin', 'LAKE', 9],
  ['Pier Token', 'PIER', 0],
  ['Ünïcødé Shells 🐚', 'SHELL', 6],
];

export function assetId(i: number): string {
  return cb58Encode(labelBytes(`asset:mainnet:${i}`, 32));
}

/** A uint64 of the node's answers. */
export const u64 = (v: number | bigint | string) => new ExactNumber(String(v));

/** Amounts in the asset's smallest unit: mostly ordinary, some past 2^53, a few near the uint64 limit. */
export function amountOf(r: Rng): ExactNumber {
  const p = r.float();
  if (p < 0.08) return u64(UINT64_MAX - r.bigBelow(1_000_000n));
  if (p < 0.25) return u64(FIRST_INEXACT + r.bigBelow(10n ** 17n));
  return u64(r.range(1_000, 5_000_000) * 1_000_000 + r.int(1_000_000));
}

export function pickAsset(r: Rng): string {
  return r.chance(0.7) ? AVAX_ASSET_ID : assetId(r.int(ASSET_NAMES.length));
}

/**
 * The UTXOs the asset chain's addresses were given (atomic ones exported from `sourceChain` when
 * given), once each; some are owned by two addresses. The data service lists the X-Chain
 * transaction that made each non-atomic one (primary_xc.ts).
 */
export function nodeUtxoSet(seed: number, sourceChain?: string): readonly SimUtxo[] {
  const label = sourceChain ?? 'X';
  const key = `${seed}:${label}`;
  let set = sets.get(key);
  if (!set) sets.set(key, (set = makeUtxoSet(seed, label, sourceChain ? 5 : 48)));
  return set;
}

const sets = new Map<string, readonly SimUtxo[]>();

function makeUtxoSet(seed: number, label: string, count: number): readonly SimUtxo[] {
  return Array.from({ length: count }, (_, k) => {
    const r = Rng.of(seed, 'utxo', label, k);
    // Address 0 owns most, so its listing takes several pages.
    const first = k % 3 === 0 ? 0 : r.int(X_ADDRESSES);
    const owners = r.chance(0.25) ? [...new Set([xAddress(first), xAddress((first + 1) % X_ADDRESSES)])] : [xAddress(first)];
    const amount = k === 0 ? UINT64_MAX.toString() : amountOf(r).text;
    const base = { txId: id32(r), outputIndex: r.int(5), assetId: pickAsset(r), amount, locktime: ((t) => (k === 1 ? UINT64_MAX.toString() : t))(r.chance(0.1) ? String(WORLD_NOW + r.int(DAY * 90)) : '0'), threshold: 1 + r.int(owners.length), owners };
    return { ...base, ...encodeUtxo(base) };
  });
}
