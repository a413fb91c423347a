// The X-Chain's transactions and the C-Chain's atomic transactions as the data service lists them
// (docs/services.md, Data service, X- and C-Chain transactions), derived from the P-Chain world of
// primary.ts so that the three agree: every P-Chain ImportTx from the X- or C-Chain imports the
// outputs of an ExportTx listed here (same UTXO ids, amounts and owners), and every P-Chain ExportTx
// to one of them is taken by an ImportTx listed here. The X-Chain adds its own traffic (transfers
// of AVAX and of other assets, new assets) beside each P-Chain block. Transactions are drawn per
// P-Chain block index, cheap headers first, so a listing by address builds only what it serves.
import { cb58Encode, isEvmAddress, type Network } from '../ids.js';
import { ExactNumber } from '../json.js';
import { WORLD_NOW } from './evm.js';
import { Rng, id32, labelBytes } from './hash.js';
import { checksumAddress } from './keccak.js';
import { lowerBound } from './listing.js';
import { ASSET_NAMES, assetId as nodeAssetId, nodeUtxoSet } from './node_utxos.js';
import {
  C_CHAIN, P_BLOCK_SECONDS, P_CHAIN_ID, P_T0, X_CHAIN, cBlockHash, primaryWorld, xBlockHash, xBlockHeight,
  type Header, type PChainUtxo, type PrimaryNetworkBlock, type PrimaryTxQuery, type PrimaryWorld, type TimeRange,
} from './primary.js';
import { AVAX_ASSET_ID, addressBody, poolAddress, stakingNetwork, type AssetAmount, type StakingNetwork } from './staking.js';

/** A UTXO as the X- and C-Chain listings give it (the OpenAPI's Utxo; not the P-Chain's PChainUtxo). */
export interface XcUtxo {
  addresses: string[];
  asset: AssetAmount;
  consumedOnChainId: string;
  createdOnChainId: string;
  utxoId: string;
  creationTxHash: string;
  /** uint64 seconds (a JSON number; exact where it passes 2^53) */
  locktime: number | ExactNumber;
  /** a string of digits, unlike the P-Chain's number */
  outputIndex: string;
  threshold: number;
  timestamp: number;
  utxoType: string;
  consumingTxHash?: string;
  consumingTxTimestamp?: number;
  credentials?: Credential[];
}

interface Credential {
  signature: string;
  publicKey: string;
}

export interface XChainAssetDetails {
  assetId: string;
  name: string;
  symbol: string;
  denomination: number;
  type: 'secp256k1' | 'nft';
  createdAtTimestamp: number;
  cap: 'fixed' | 'variable';
}

/** An X-Chain transaction since Cortina: in a block (the OpenAPI's XChainLinearTransaction). */
export interface XChainTransaction {
  txHash: string;
  chainFormat: 'linear';
  timestamp: number;
  txType: 'BaseTx' | 'CreateAssetTx' | 'ImportTx' | 'ExportTx';
  memo: string;
  consumedUtxos: XcUtxo[];
  emittedUtxos: XcUtxo[];
  amountUnlocked: AssetAmount[];
  amountCreated: AssetAmount[];
  sourceChain?: string;
  destinationChain?: string;
  assetCreated?: XChainAssetDetails;
  blockHeight: number;
  blockHash: string;
}

/** A C-Chain atomic transaction (the OpenAPI's CChainImportTransaction / CChainExportTransaction). */
export interface CChainAtomicTransaction {
  txHash: string;
  blockHeight: number;
  blockHash: string;
  timestamp: number;
  memo: string;
  amountUnlocked: AssetAmount[];
  amountCreated: AssetAmount[];
  sourceChain: string;
  destinationChain: string;
  txType: 'ImportTx' | 'ExportTx';
  /** exports: the EVM accounts debited */
  evmInputs?: Array<{ fromAddress: string; asset: AssetAmount; credentials: Credential[] }>;
  emittedUtxos?: XcUtxo[];
  /** imports: the EVM accounts credited */
  evmOutputs?: Array<{ toAddress: string; asset: AssetAmount }>;
  consumedUtxos?: XcUtxo[];
}

export type XcChain = 'x' | 'c';

/** What an X- or C-Chain transaction touches, drawn before its body. */
interface XcHeader {
  /** the P-Chain block index it sits beside */
  block: number;
  /** 0 an export before that block, 1 the X-Chain's own, 2 an import after it */
  phase: 0 | 1 | 2;
  k: number;
  type: XChainTransaction['txType'];
  /** pool indices of its owners */
  addrs: number[];
  time: number;
  /** the P-Chain transaction it pairs with (imports and exports) */
  p?: Header;
  /** own BaseTx: index into X_ASSETS of the asset moved, besides AVAX */
  asset?: number;
  /** the BaseTx that made the node's UTXO nodeUtxoSet()[anchor], to `owners` (bech32 bodies) */
  anchor?: number;
  owners?: string[];
}

/** Assets other than AVAX that the X-Chain's own transfers move; amounts of the 18-decimal one pass 2^53. */
const X_ASSETS = [
  { name: 'Lake Token', symbol: 'LAKE', denomination: 6 },
  { name: 'Pebble', symbol: 'PBL', denomination: 0 },
  { name: 'Reed Coin', symbol: 'REED', denomination: 18 },
] as const;
const POOL: Record<StakingNetwork, number> = { mainnet: 48, fuji: 16 };
const NANO = 1_000_000_000n;
/** nAVAX an X-Chain or C-Chain atomic transaction burns (a CreateAssetTx ten times that). */
const XC_FEE = 1_000_000n;
const DAY = 86_400;
/** P-Chain blocks kept clear of the node's UTXOs at either end of the world's fortnight. */
const ANCHOR_MARGIN = 100;

export function xAssetId(net: StakingNetwork, n: number): string {
  return cb58Encode(labelBytes(`xasset:${net}:${n}`, 32));
}

/** The EVM account of pool owner i on the C-Chain (checksummed, as production sends it). */
export function evmOwner(net: StakingNetwork, i: number): string {
  return checksumAddress(labelBytes(`cowner:${net}:${i}`, 20));
}

function asset(net: StakingNetwork, n: number | undefined, amount: bigint): AssetAmount {
  if (n === undefined) return { assetId: AVAX_ASSET_ID[net], name: 'Avalanche', symbol: 'AVAX', denomination: 9, type: 'secp256k1', amount: amount.toString() };
  const a = X_ASSETS[n]!;
  return { assetId: xAssetId(net, n), name: a.name, symbol: a.symbol, denomination: a.denomination, type: 'secp256k1', amount: amount.toString() };
}

/** Per-asset sums of UTXOs (or EVM entries), in the order the assets first appear. */
function sums(list: ReadonlyArray<{ asset: AssetAmount }>): AssetAmount[] {
  const by = new Map<string, AssetAmount>();
  for (const { asset: a } of list) {
    const s = by.get(a.assetId);
    by.set(a.assetId, s ? { ...s, amount: (BigInt(s.amount) + BigInt(a.amount)).toString() } : { ...a });
  }
  return [...by.values()];
}

function credential(r: Rng): Credential {
  return { signature: Buffer.from(r.bytes(65)).toString('base64'), publicKey: Buffer.from(r.bytes(33)).toString('base64') };
}

/** A P-Chain UTXO as the other chain's listing shows the same output. */
export function fromP(u: PChainUtxo, consumedOnChainId: string): XcUtxo {
  return {
    addresses: [...u.addresses], asset: { ...u.asset }, consumedOnChainId, createdOnChainId: u.createdOnChainId, utxoId: u.utxoId,
    creationTxHash: u.txHash, locktime: u.platformLocktime, outputIndex: String(u.outputIndex), threshold: u.threshold, timestamp: u.blockTimestamp, utxoType: 'TRANSFER',
  };
}

export class AtomicWorld {
  /** Headers made so far per network, ordered by time (then as drawn); made through P-Chain block madeUpTo. */
  private readonly headers = new Map<StakingNetwork, XcHeader[]>();
  private readonly madeUpTo = new Map<StakingNetwork, number>();
  private readonly cache = new Map<string, XcHeader[]>();

  constructor(readonly p: PrimaryWorld, readonly chain: XcChain) {}

  private get seed(): number {
    return this.p.seed;
  }

  /** The headers beside P-Chain block i: exports before it, the X-Chain's own, imports after it. */
  private blockHeaders(net: StakingNetwork, i: number): XcHeader[] {
    const out: XcHeader[] = [];
    const pHeaders = this.p.blockHeaders(net, i).filter((h) => (h.type === 'ImportTx' || h.type === 'ExportTx') && this.p.peerOf(net, h) === this.chain);
    const pair = (h: Header, k: number): XcHeader => {
      const imports = h.type === 'ExportTx';
      // A P-Chain export pays `other` (the second owner, if any); an import is the first owner's.
      const a = imports ? h.addrs[1] ?? h.addrs[0]! : h.addrs[0]!;
      return { block: i, phase: imports ? 2 : 0, k, type: imports ? 'ImportTx' : 'ExportTx', addrs: [a], time: this.p.peerTx(net, h).timestamp, p: h };
    };
    pHeaders.filter((h) => h.type === 'ImportTx').forEach((h, k) => out.push(pair(h, k)));
    if (this.chain === 'x') {
      const r = Rng.of(this.seed, 'xown', net, i);
      const n = r.chance(0.45) ? (r.chance(0.8) ? 1 : 2) : 0;
      const pool = POOL[net];
      for (let k = 0; k < n; k++) {
        const roll = r.int(20);
        const a = r.int(pool);
        const addrs = [a, (a + 1 + r.int(pool - 1)) % pool];
        const time = this.p.blockTime(net, i);
        if (roll === 0) out.push({ block: i, phase: 1, k, type: 'CreateAssetTx', addrs: [a], time });
        else out.push({ block: i, phase: 1, k, type: 'BaseTx', addrs, time, ...(roll <= 6 ? { asset: roll % X_ASSETS.length } : {}) });
      }
    }
    if (this.chain === 'x' && net === 'mainnet') {
      for (const anchor of this.anchorsAt(i)) out.push(this.anchorHeader(net, i, anchor));
    }
    pHeaders.filter((h) => h.type === 'ExportTx').forEach((h, k) => out.push(pair(h, k)));
    return out;
  }

  private anchorBlocks?: Map<number, number[]>;

  private anchorHeader(net: StakingNetwork, i: number, anchor: number): XcHeader {
    const u = nodeUtxoSet(this.seed)[anchor]!;
    const from = Rng.of(this.seed, 'xanchorfrom', anchor).int(POOL[net]);
    return { block: i, phase: 1, k: -1 - anchor, type: 'BaseTx', addrs: [from], owners: u.owners.map((o) => o.slice(2)), time: this.p.blockTime(net, i), anchor };
  }

  /** The anchors' headers through P-Chain block `last`, by time (mainnet's X-Chain only). */
  private anchorHeaders(net: StakingNetwork, last: number): XcHeader[] {
    if (this.chain !== 'x' || net !== 'mainnet') return [];
    this.anchorsAt(0);
    return [...this.anchorBlocks!]
      .filter(([i]) => i <= last)
      .sort(([a], [b]) => a - b)
      .flatMap(([i, anchors]) => anchors.map((anchor) => this.anchorHeader(net, i, anchor)));
  }

  /**
   * The node's UTXOs (mainnet) made beside P-Chain block i: each at a block of the world's first
   * fortnight drawn from its index, so that the node's addresses have X-Chain transactions here.
   */
  private anchorsAt(i: number): number[] {
    if (!this.anchorBlocks) {
      this.anchorBlocks = new Map();
      const span = Math.floor((WORLD_NOW - P_T0) / P_BLOCK_SECONDS) - 2 * ANCHOR_MARGIN;
      nodeUtxoSet(this.seed).forEach((_, anchor) => {
        const at = ANCHOR_MARGIN + Rng.of(this.seed, 'xanchor', anchor).int(span);
        this.anchorBlocks!.set(at, [...(this.anchorBlocks!.get(at) ?? []), anchor]);
      });
    }
    return this.anchorBlocks.get(i) ?? [];
  }

  /** Headers through P-Chain block `last`, kept ordered by time: a C-Chain block may fall either side of a neighbour's. */
  private headersThrough(net: StakingNetwork, last: number): XcHeader[] {
    let list = this.headers.get(net);
    if (!list) this.headers.set(net, (list = []));
    for (let i = (this.madeUpTo.get(net) ?? -1) + 1; i <= last; i++) {
      for (const h of this.blockHeaders(net, i)) {
        let at = list.length;
        while (at > 0 && list[at - 1]!.time > h.time) at--;
        list.splice(at, 0, h);
      }
    }
    this.madeUpTo.set(net, Math.max(this.madeUpTo.get(net) ?? -1, last));
    return list;
  }

  /** Whether pool owner a is one of the addresses asked (bech32 bodies, or 0x accounts on the C-Chain). */
  private matching(net: StakingNetwork, q: PrimaryTxQuery, t: number): XcHeader[] {
    const want = q.addresses && new Set(q.addresses.map((a) => (isEvmAddress(a) ? a.toLowerCase() : addressBody(a))));
    const types = q.txTypes && new Set(q.txTypes);
    const key = JSON.stringify([net, [...(want ?? [])].sort(), [...(types ?? [])].sort(), q.startTimestamp ?? null, q.endTimestamp ?? null, q.assetId ?? null, t]);
    let hit = this.cache.get(key);
    if (hit) return hit;
    const owners = want && new Set(Array.from({ length: POOL[net] }, (_, a) => a).filter((a) => want.has(poolAddress(net, a)) || (this.chain === 'c' && want.has(evmOwner(net, a).toLowerCase()))));
    // A transaction at t may sit beside the next P-Chain block (an export just before it). Addresses
    // of no pool owner (the node's) have only the transactions that made their UTXOs: found without
    // making every header of the fortnight.
    const last = this.p.headAt(net, t) + 1;
    const headers = owners && owners.size === 0 ? this.anchorHeaders(net, last) : this.headersThrough(net, last);
    const hi = Math.min(t, q.endTimestamp ?? Infinity);
    hit = [];
    const first = q.startTimestamp === undefined ? 0 : lowerBound(0, headers.length, (x) => headers[x]!.time >= q.startTimestamp!);
    for (let x = first; x < headers.length && headers[x]!.time <= hi; x++) {
      const h = headers[x]!;
      if (owners && !h.addrs.some((a) => owners.has(a)) && !h.owners?.some((o) => want!.has(o))) continue;
      if (types && !types.has(h.type)) continue;
      if (q.assetId !== undefined && !this.moves(net, h, q.assetId)) continue;
      hit.push(h);
    }
    if (this.cache.size > 256) this.cache.clear();
    this.cache.set(key, hit);
    return hit;
  }

  /**
   * Whether a transaction moves an asset, from its header: every one pays its fee in AVAX; an own
   * BaseTx moves its other asset too, a CreateAssetTx mints its own (its id is the transaction's),
   * and a transaction that made one of the node's UTXOs moves that UTXO's asset.
   */
  private moves(net: StakingNetwork, h: XcHeader, assetId: string): boolean {
    if (assetId === AVAX_ASSET_ID[net]) return true;
    if (h.anchor !== undefined) return nodeUtxoSet(this.seed)[h.anchor]!.assetId === assetId;
    if (h.p) return false;
    if (h.type === 'CreateAssetTx') return this.ownTxHash(net, h) === assetId;
    return h.asset !== undefined && xAssetId(net, h.asset) === assetId;
  }

  private ownTxHash(net: StakingNetwork, h: XcHeader): string {
    return id32(Rng.of(this.seed, 'xowntx', net, h.block, h.k));
  }

  /**
   * The chain's blocks at t in [start, end] (inclusive), newest first. The X-Chain's: one a phase of
   * a P-Chain block that holds a transaction (its exports, its own, its imports), so heights have
   * gaps and a block's parent is the block below it. The C-Chain's: the EVM blocks its atomic
   * transactions sit in (the blocks the P-Chain's peers name), each the child of the EVM block below
   * it, listing those transactions only (its EVM transactions are `blocks`').
   */
  listBlocks(network: Network, range: TimeRange, t = WORLD_NOW): { length: number; at(k: number): PrimaryNetworkBlock } {
    const net = stakingNetwork(network);
    const headers = this.headersThrough(net, this.p.headAt(net, t) + 1);
    // Grouped by height once per growth of the headers (mainnet and fuji apart).
    const cacheKey = `${net}:${headers.length}`;
    let list = this.xBlockCache.get(cacheKey);
    if (!list) {
      const by = new Map<number, XcHeader[]>();
      for (const h of headers) {
        const height = this.chain === 'x' ? xBlockHeight(net, h.block, h.phase) : this.p.peerTx(net, h.p!).blockHeight;
        by.set(height, [...(by.get(height) ?? []), h]);
      }
      list = [...by].sort(([a], [b]) => a - b).map(([height, hs]) => ({ height, time: hs[0]!.time, headers: hs }));
      if (this.xBlockCache.size > 8) this.xBlockCache.clear();
      this.xBlockCache.set(cacheKey, list);
    }
    const all = list;
    const hi = Math.min(t, range.endTimestamp ?? Infinity);
    const within = all.map((b, x) => ({ b, x })).filter(({ b }) => b.time <= hi && (range.startTimestamp === undefined || b.time >= range.startTimestamp));
    return {
      length: within.length,
      at: (k) => {
        const { b, x } = within[within.length - 1 - k]!;
        const transactions = b.headers.map((h) => this.txHashOf(net, h));
        const hash = (height: number) => (this.chain === 'x' ? xBlockHash(this.seed, net, height) : cBlockHash(this.seed, net, height));
        return {
          blockNumber: String(b.height), blockHash: hash(b.height),
          parentHash: hash(this.chain === 'c' || x === 0 ? b.height - 1 : all[x - 1]!.height),
          blockTimestamp: b.time, blockType: 'StandardBlock', txCount: transactions.length, transactions,
          blockSizeBytes: 120 + b.headers.reduce((n, h) => n + 300 + 150 * h.addrs.length, 0),
        };
      },
    };
  }

  private readonly xBlockCache = new Map<string, Array<{ height: number; time: number; headers: XcHeader[] }>>();

  /** The id of the transaction a header names, without making its body. */
  private txHashOf(net: StakingNetwork, h: XcHeader): string {
    if (h.anchor !== undefined) return nodeUtxoSet(this.seed)[h.anchor]!.txId;
    return h.p ? this.p.peerTx(net, h.p).txHash : this.ownTxHash(net, h);
  }

  /** The transactions a query lists at time t, in serving order (newest first unless asc). */
  listTransactions<T extends XChainTransaction | CChainAtomicTransaction>(network: Network, q: PrimaryTxQuery, t = WORLD_NOW): { length: number; at(k: number): T } {
    const net = stakingNetwork(network);
    const hits = this.matching(net, q, t);
    const asc = q.sortOrder === 'asc';
    return { length: hits.length, at: (k) => this.transaction(net, hits[asc ? k : hits.length - 1 - k]!, t) as T };
  }

  private transaction(net: StakingNetwork, h: XcHeader, t: number): XChainTransaction | CChainAtomicTransaction {
    if (h.anchor !== undefined) return this.anchored(net, h);
    if (!h.p) return this.own(net, h);
    return h.type === 'ImportTx' ? this.importing(net, h.p) : this.exporting(net, h.p, t);
  }

  private get chainId(): Record<StakingNetwork, string> {
    return this.chain === 'x' ? X_CHAIN : C_CHAIN;
  }

  /** The ImportTx that takes what a P-Chain ExportTx sent here. */
  private importing(net: StakingNetwork, ph: Header): XChainTransaction | CChainAtomicTransaction {
    const here = this.chainId[net];
    const ptx = this.p.transaction(net, ph);
    const peer = this.p.peerTx(net, ph);
    const r = Rng.of(this.seed, 'xcimport', net, ph.block, ph.k);
    const consumed = ptx.emittedUtxos.filter((u) => u.consumedOnChainId === here).map((u): XcUtxo => ({
      ...fromP(u, here), consumingTxHash: peer.txHash, consumingTxTimestamp: peer.timestamp, credentials: [credential(r)],
    }));
    const total = consumed.reduce((n, u) => n + BigInt(u.asset.amount), 0n);
    const owner = consumed[0]!.addresses[0]!;
    const base = { txHash: peer.txHash, timestamp: peer.timestamp, memo: '', blockHeight: peer.blockHeight, blockHash: peer.blockHash, sourceChain: P_CHAIN_ID };
    if (this.chain === 'c') {
      const evmOutputs = [{ toAddress: evmOwner(net, ph.addrs[1] ?? ph.addrs[0]!), asset: asset(net, undefined, total - XC_FEE) }];
      return { ...base, destinationChain: here, txType: 'ImportTx', amountUnlocked: sums(consumed), amountCreated: sums(evmOutputs), evmOutputs, consumedUtxos: consumed };
    }
    const emitted = [this.output(net, peer.txHash, 0, owner, asset(net, undefined, total - XC_FEE), peer.timestamp)];
    return { ...base, chainFormat: 'linear', txType: 'ImportTx', consumedUtxos: consumed, emittedUtxos: emitted, amountUnlocked: sums(consumed), amountCreated: sums(emitted) };
  }

  /** The ExportTx that made what a P-Chain ImportTx takes from here; spent once that import is listed at t. */
  private exporting(net: StakingNetwork, ph: Header, t: number): XChainTransaction | CChainAtomicTransaction {
    const here = this.chainId[net];
    const ptx = this.p.transaction(net, ph);
    const peer = this.p.peerTx(net, ph);
    const r = Rng.of(this.seed, 'xcexport', net, ph.block, ph.k);
    const spent = t >= ptx.blockTimestamp ? { consumingTxHash: ptx.txHash, consumingTxTimestamp: ptx.blockTimestamp } : {};
    const exported = ptx.consumedUtxos.map((u): XcUtxo => ({ ...fromP(u, P_CHAIN_ID), ...spent }));
    const total = exported.reduce((n, u) => n + BigInt(u.asset.amount), 0n);
    const owner = ph.addrs[0]!;
    const base = { txHash: peer.txHash, timestamp: peer.timestamp, memo: '', blockHeight: peer.blockHeight, blockHash: peer.blockHash, sourceChain: here, destinationChain: P_CHAIN_ID };
    if (this.chain === 'c') {
      const evmInputs = [{ fromAddress: evmOwner(net, owner), asset: asset(net, undefined, total + XC_FEE), credentials: [credential(r)] }];
      return { ...base, txType: 'ExportTx', amountUnlocked: sums(evmInputs), amountCreated: sums(exported), evmInputs, emittedUtxos: exported };
    }
    // Paid from one X-Chain UTXO of the owner's, with change back on the X-Chain after the exported outputs.
    const change = r.chance(0.7) ? BigInt(r.range(1, 900)) * NANO + r.bigBelow(NANO) : 0n;
    const address = poolAddress(net, owner);
    const consumed = [this.earlier(net, r, 0, address, asset(net, undefined, total + XC_FEE + change), peer.txHash, peer.timestamp)];
    const emitted = change > 0n ? [...exported, this.output(net, peer.txHash, exported.length, address, asset(net, undefined, change), peer.timestamp)] : exported;
    return { ...base, chainFormat: 'linear', txType: 'ExportTx', consumedUtxos: consumed, emittedUtxos: emitted, amountUnlocked: sums(consumed), amountCreated: sums(emitted) };
  }

  /** The X-Chain's own transactions: transfers of AVAX or of another asset, and new assets. */
  private own(net: StakingNetwork, h: XcHeader): XChainTransaction {
    const r = Rng.of(this.seed, 'xownbody', net, h.block, h.k);
    const txHash = this.ownTxHash(net, h);
    const blockHeight = xBlockHeight(net, h.block, 1);
    const ts = h.time;
    const from = poolAddress(net, h.addrs[0]!);
    const to = poolAddress(net, h.addrs[1] ?? h.addrs[0]!);
    const consumed: XcUtxo[] = [];
    const emitted: XcUtxo[] = [];
    const emit = (address: string, a: AssetAmount) => emitted.push(this.output(net, txHash, emitted.length, address, a, ts));
    const spend = (a: AssetAmount) => consumed.push(this.earlier(net, r, consumed.length, from, a, txHash, ts));
    const fee = h.type === 'CreateAssetTx' ? 10n * XC_FEE : XC_FEE;
    const avaxChange = BigInt(r.range(0, 400)) * NANO + r.bigBelow(NANO);
    const tx: XChainTransaction = {
      txHash, chainFormat: 'linear', timestamp: ts, txType: h.type, memo: r.chance(0.2) ? '0x' + r.hex(12) : '', consumedUtxos: consumed, emittedUtxos: emitted,
      amountUnlocked: [], amountCreated: [], blockHeight, blockHash: xBlockHash(this.seed, net, blockHeight),
    };
    if (h.type === 'CreateAssetTx') {
      spend(asset(net, undefined, fee + avaxChange));
      const denomination = r.pick([0, 6, 9, 18]);
      const symbol = 'A' + r.hex(2).toUpperCase();
      // A uint64 supply, most of them past 2^53.
      const supply = r.bigBelow(2n ** 64n - 1n) + 1n;
      tx.assetCreated = { assetId: txHash, name: `Asset ${symbol}`, symbol, denomination, type: 'secp256k1', createdAtTimestamp: ts, cap: r.chance(0.8) ? 'fixed' : 'variable' };
      emit(from, { assetId: txHash, name: `Asset ${symbol}`, symbol, denomination, type: 'secp256k1', amount: supply.toString() });
      if (avaxChange > 0n) emit(from, asset(net, undefined, avaxChange));
    } else if (h.asset !== undefined) {
      const held = X_ASSETS[h.asset]!.denomination === 18 ? r.bigBelow(2n ** 64n - 2n) + 2n : BigInt(r.range(2, 2_000_000_000));
      const sent = held / 2n + r.bigBelow(held / 2n);
      spend(asset(net, h.asset, held));
      spend(asset(net, undefined, fee + avaxChange));
      emit(to, asset(net, h.asset, sent));
      if (held > sent) emit(from, asset(net, h.asset, held - sent));
      if (avaxChange > 0n) emit(from, asset(net, undefined, avaxChange));
    } else {
      const amount = BigInt(r.range(1, 20_000)) * NANO + r.bigBelow(NANO);
      const n = r.chance(0.3) ? 2 : 1;
      let left = amount + fee + avaxChange;
      for (let u = 0; u < n; u++) {
        const part = u === n - 1 ? left : left / 2n;
        left -= part;
        spend(asset(net, undefined, part));
      }
      emit(to, asset(net, undefined, amount));
      if (avaxChange > 0n) emit(from, asset(net, undefined, avaxChange));
    }
    tx.amountUnlocked = sums(consumed);
    tx.amountCreated = sums(emitted);
    return tx;
  }

  /**
   * The BaseTx that made a UTXO the node's addresses hold (node_utxos.ts): a pool owner pays it,
   * its AVAX change in the outputs before it, so that the UTXO sits at the node's output index.
   */
  private anchored(net: StakingNetwork, h: XcHeader): XChainTransaction {
    const u = nodeUtxoSet(this.seed)[h.anchor!]!;
    const r = Rng.of(this.seed, 'xanchorbody', h.anchor!);
    const ts = h.time;
    const from = poolAddress(net, h.addrs[0]!);
    const named = ASSET_NAMES.findIndex((_, n) => nodeAssetId(n) === u.assetId);
    const [name, symbol, denomination] = ASSET_NAMES[named] ?? ['Avalanche', 'AVAX', 9];
    const sent: AssetAmount = { assetId: u.assetId, name, symbol, denomination, type: 'secp256k1', amount: u.amount };
    const emitted: XcUtxo[] = [];
    let change = 0n;
    for (let n = 0; n < u.outputIndex; n++) {
      const c = BigInt(r.range(1, 900)) * NANO + r.bigBelow(NANO);
      change += c;
      emitted.push(this.output(net, u.txId, n, from, asset(net, undefined, c), ts));
    }
    const locktime = BigInt(u.locktime) > BigInt(Number.MAX_SAFE_INTEGER) ? new ExactNumber(u.locktime) : Number(u.locktime);
    emitted.push({ ...this.output(net, u.txId, u.outputIndex, from, sent, ts), addresses: h.owners!, locktime, threshold: u.threshold });
    const consumed = [this.earlier(net, r, 0, from, sent, u.txId, ts), this.earlier(net, r, 1, from, asset(net, undefined, XC_FEE + change), u.txId, ts)];
    const blockHeight = xBlockHeight(net, h.block, 1);
    return {
      txHash: u.txId, chainFormat: 'linear', timestamp: ts, txType: 'BaseTx', memo: '', consumedUtxos: consumed, emittedUtxos: emitted,
      amountUnlocked: sums(consumed), amountCreated: sums(emitted), blockHeight, blockHash: xBlockHash(this.seed, net, blockHeight),
    };
  }

  /** An output of transaction txHash on this chain (unspent as listed). */
  private output(net: StakingNetwork, txHash: string, index: number, address: string, a: AssetAmount, ts: number): XcUtxo {
    const here = this.chainId[net];
    return {
      addresses: [address], asset: a, consumedOnChainId: here, createdOnChainId: here, utxoId: id32(Rng.of(this.seed, 'xcutxo', txHash, index)),
      creationTxHash: txHash, locktime: 0, outputIndex: String(index), threshold: 1, timestamp: ts, utxoType: 'TRANSFER',
    };
  }

  /** The n-th UTXO spent by txHash at ts: of `address`, made on this chain earlier. */
  private earlier(net: StakingNetwork, r: Rng, n: number, address: string, a: AssetAmount, txHash: string, ts: number): XcUtxo {
    const here = this.chainId[net];
    const made = Rng.of(this.seed, 'xcprev', txHash, n);
    return {
      addresses: [address], asset: a, consumedOnChainId: here, createdOnChainId: here, utxoId: id32(made), creationTxHash: id32(made),
      locktime: 0, outputIndex: String(made.int(4)), threshold: 1, timestamp: ts - r.range(600, 90 * DAY), utxoType: 'TRANSFER',
      consumingTxHash: txHash, consumingTxTimestamp: ts, credentials: [credential(r)],
    };
  }
}

const worlds = new Map<string, AtomicWorld>();

/** The X-Chain or the C-Chain's atomic side of a seed's primary network. */
export function atomicWorld(seed: number, chain: XcChain): AtomicWorld {
  const key = `${seed}:${chain}`;
  let w = worlds.get(key);
  if (!w) worlds.set(key, (w = new AtomicWorld(primaryWorld(seed), chain)));
  return w;
}

/** Ids of the world a pipeline can name (seed-independent): two owners, and the second one's C-Chain account. */
export const XC_DEMO = {
  addresses: [poolAddress('mainnet', 0), poolAddress('mainnet', 1)].map((a) => 'X-' + a),
  evmAddresses: [evmOwner('mainnet', 1).toLowerCase()],
} as const;
