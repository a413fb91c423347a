// An address's own activity: its native transactions, the NFTs it holds, and the contracts it
// deployed. Native transactions are transactions of the block world (blocks.ts) with the address
// patched in as sender or receiver, so `transactions:listNative` and the blocks' transactions agree
// on every field. Holdings are pure functions of (seed, chain, holder, epoch of the block), as the
// ERC-20 balances are (balances.ts).
import { amountOf, type AmountClass } from './amounts.js';
import { EPOCH_BLOCKS } from './balances.js';
import type { BlockTransaction, BlockWorld } from './blocks.js';
import type { Catalog, ContractMetadata } from './catalog.js';
import { WORLD_NOW, headAt, type BlockRange, type ChainInfo, type ContractInfo, type Erc721Token, type Erc1155Token, type EvmWorld, type RichAddress } from './evm.js';
import { Rng, hashKey } from './hash.js';
import { checksumAddress } from './keccak.js';
import { descending, fromArray, lowerBound, type Listing } from './listing.js';

/** Native transactions per day after WORLD_NOW, per active address, at scale 1. */
export const NATIVE_PER_DAY = 24;
/** Room left at the end of an item's stretch of blocks for stepping past empty blocks. */
const MARGIN = 64;
const MIN_STRIDE = 2 * MARGIN;
const DAY_SECONDS = 86_400;

interface NativeLayout {
  count: number;
  firstBlock: number;
  stride: number;
  /** first block after the WORLD_NOW head; perDay items a day above it, in stretches of fstride */
  base: number;
  blocksPerDay: number;
  perDay: number;
  fstride: number;
}

/** A token held, as the transfers list it, with its chain. */
export interface Erc721TokenBalance extends Erc721Token {
  chainId: string;
}

export interface Erc1155TokenBalance extends Erc1155Token {
  chainId: string;
  balance: string;
}

export class AddressActivity {
  private readonly layouts = new Map<string, NativeLayout>();
  private readonly activeByChain = new Map<string, readonly RichAddress[]>();

  constructor(readonly seed: number, readonly scale: number, private readonly evm: EvmWorld, private readonly blocks: BlockWorld) {}

  /**
   * Addresses with native transactions: the chain's internal-transaction owners (a factory and
   * wallets). Address k has its transactions in blocks k modulo their number only, so two of them
   * never claim the same transaction.
   */
  actives(chainId: string): readonly RichAddress[] {
    let list = this.activeByChain.get(chainId);
    if (!list) this.activeByChain.set(chainId, (list = this.evm.internalOwnersOf(chainId).map((a) => this.evm.owner(chainId, a)!)));
    return list;
  }

  private activeIndex(chain: ChainInfo, address: string): number {
    return this.actives(chain.chainId).findIndex((o) => o.address.toLowerCase() === address.toLowerCase());
  }

  private layout(chain: ChainInfo, k: number): NativeLayout {
    const label = `native:${chain.chainId}:${k}`;
    let l = this.layouts.get(label);
    if (!l) {
      const r = Rng.of(this.seed, 'layout', label);
      const endBlock = chain.latestBlock - 200 - r.int(2000);
      const count = Math.max(1, Math.min(Math.round(r.range(150, 600) * this.scale), Math.floor((endBlock - 1) / MIN_STRIDE)));
      const stride = Math.max(MIN_STRIDE, Math.floor(r.range(100_000, 5_000_000) / count));
      const blocksPerDay = DAY_SECONDS / chain.blockTimeSeconds;
      const perDay = Math.max(1, Math.min(Math.round(NATIVE_PER_DAY * this.scale), Math.floor(blocksPerDay / MIN_STRIDE)));
      l = { count, firstBlock: Math.max(1, endBlock - count * stride), stride, base: chain.latestBlock + 1, blocksPerDay, perDay, fstride: Math.floor(blocksPerDay / perDay) };
      this.layouts.set(label, l);
    }
    return l;
  }

  /** Block of item i of active address k: one a stretch, never an empty block, always ≡ k (mod K). */
  private blockOf(chain: ChainInfo, k: number, i: number): number {
    const l = this.layout(chain, k);
    const K = this.actives(chain.chainId).length;
    let start: number;
    let width: number;
    if (i < l.count) {
      start = l.firstBlock + i * l.stride;
      width = l.stride;
    } else {
      const n = i - l.count;
      start = l.base + Math.floor(n / l.perDay) * l.blocksPerDay + (n % l.perDay) * l.fstride;
      width = l.fstride;
    }
    let b = start + (hashKey(this.seed, 'native-at', chain.chainId, k, i) % (width - MARGIN));
    b += (((k - b) % K) + K) % K;
    while (this.blocks.txCount(chain, b) === 0) b += K;
    return b;
  }

  /** Items of address k up to block `head`. */
  private visible(chain: ChainInfo, k: number, head: number): number {
    const l = this.layout(chain, k);
    const upper = head < l.base ? l.count : l.count + (Math.floor((head - l.base) / l.blocksPerDay) + 1) * l.perDay;
    return lowerBound(0, upper, (i) => this.blockOf(chain, k, i) > head);
  }

  /** The item of address k in block n, if any. */
  private itemIn(chain: ChainInfo, k: number, n: number): number | undefined {
    const l = this.layout(chain, k);
    let lo = 0;
    let hi = l.count;
    if (n >= l.base) {
      const day = Math.floor((n - l.base) / l.blocksPerDay);
      lo = l.count + day * l.perDay;
      hi = lo + l.perDay;
    }
    const i = lowerBound(lo, hi, (j) => this.blockOf(chain, k, j) >= n);
    return i < hi && this.blockOf(chain, k, i) === n ? i : undefined;
  }

  /** Which transaction of block n an active address's item is. */
  private indexIn(chain: ChainInfo, n: number): number {
    return hashKey(this.seed, 'native-index', chain.chainId, n) % this.blocks.txCount(chain, n);
  }

  /** A block's transaction as served: an active address's own item written into it (the blocks' TxPatch). */
  patch(chain: ChainInfo, n: number, i: number, tx: BlockTransaction): BlockTransaction {
    const actives = this.actives(chain.chainId);
    if (!actives.length) return tx;
    const k = n % actives.length;
    if (i !== this.indexIn(chain, n) || this.itemIn(chain, k, n) === undefined) return tx;
    const who = { ...actives[k]! };
    const callType = tx.method.callType;
    // A named contract (the factory) receives calls; a wallet sends, and sometimes receives AVAX.
    const receives = who.name !== undefined ? callType !== 'CONTRACT_CREATION' : callType === 'NATIVE_TRANSFER' && hashKey(this.seed, 'native-side', chain.chainId, n) % 2 === 0;
    return receives ? { ...tx, to: who } : { ...tx, from: who };
  }

  /** The address's native transactions at `at`, newest first; none for an address without any. */
  listNative(chain: ChainInfo, address: string, range: BlockRange = {}, at = WORLD_NOW): Listing<BlockTransaction> {
    const k = this.activeIndex(chain, address);
    if (k < 0) return fromArray([]);
    const visible = this.visible(chain, k, headAt(chain, at));
    const lo = range.startBlock === undefined ? 0 : lowerBound(0, visible, (i) => this.blockOf(chain, k, i) >= range.startBlock!);
    const hi = range.endBlock === undefined ? visible : lowerBound(0, visible, (i) => this.blockOf(chain, k, i) >= range.endBlock!);
    return descending(lo, Math.max(lo, hi), (i) => {
      const n = this.blockOf(chain, k, i);
      return this.blocks.transactions(chain, n)[this.indexIn(chain, n)]!;
    });
  }

  /** Native transactions of an address on chain at `at` (Unix seconds). */
  nativeCount(chain: ChainInfo, address: string, at = WORLD_NOW): number {
    const k = this.activeIndex(chain, address);
    return k < 0 ? 0 : this.visible(chain, k, headAt(chain, at));
  }

  private nfts(chain: ChainInfo, type: 'ERC-721' | 'ERC-1155', contractAddress?: string): ContractInfo[] {
    return this.evm.contractsOf(chain.chainId).filter((c) => c.ercType === type && (!contractAddress || c.address.toLowerCase() === contractAddress.toLowerCase()));
  }

  /** The ERC-721 tokens a holder owns at a block, by contract. */
  erc721(chain: ChainInfo, holder: string, block: number, contractAddress?: string): Erc721TokenBalance[] {
    const epoch = Math.floor(block / EPOCH_BLOCKS);
    const out: Erc721TokenBalance[] = [];
    for (const c of this.nfts(chain, 'ERC-721', contractAddress)) {
      const r = Rng.of(this.seed, 'erc721-held', chain.chainId, holder.toLowerCase(), c.address.toLowerCase(), epoch);
      if (!r.chance(0.75)) continue;
      const ids = new Set<string>();
      for (let n = 1 + r.int(5); n > 0; n--) ids.add(r.chance(0.15) ? amountOf(r.chance(0.5) ? 'd39' : 'd78', r) : String(r.int(10_000)));
      for (const tokenId of ids) {
        const t: Erc721TokenBalance = {
          address: c.address, name: c.name, symbol: c.symbol, ercType: 'ERC-721', tokenId,
          tokenUri: this.evm.tokenUri(c, tokenId), metadata: this.evm.nftMetadata(c, tokenId), chainId: chain.chainId,
        };
        if (r.chance(0.7)) t.ownerAddress = checksumAddress(Buffer.from(holder.slice(2), 'hex'));
        out.push(t);
      }
    }
    return out;
  }

  /** The ERC-1155 balances of a holder at a block, by contract. */
  erc1155(chain: ChainInfo, holder: string, block: number, contractAddress?: string): Erc1155TokenBalance[] {
    const epoch = Math.floor(block / EPOCH_BLOCKS);
    const out: Erc1155TokenBalance[] = [];
    for (const c of this.nfts(chain, 'ERC-1155', contractAddress)) {
      const r = Rng.of(this.seed, 'erc1155-held', chain.chainId, holder.toLowerCase(), c.address.toLowerCase(), epoch);
      if (!r.chance(0.8)) continue;
      const ids = new Set<string>();
      for (let n = 1 + r.int(6); n > 0; n--) ids.add(String(r.int(48)));
      let first = true;
      for (const tokenId of ids) {
        const u = r.float();
        // A contract's first id is often a fungible item minted in bulk, past DECIMAL(38) (an exactness edge).
        const bulk = first ? (['d39', 'd78', 'max', 'small'] as const)[hashKey(this.seed, 'erc1155-bulk', holder.toLowerCase(), c.address, epoch) % 4] : undefined;
        first = false;
        const cls: AmountClass = bulk ?? (u < 0.8 ? 'small' : u < 0.9 ? 'typical' : u < 0.95 ? 'd39' : 'd78');
        out.push({
          address: c.address, ercType: 'ERC-1155', tokenId, tokenUri: this.evm.tokenUri(c, tokenId),
          metadata: this.evm.nftMetadata(c, tokenId), chainId: chain.chainId, balance: amountOf(cls, r, 0),
        });
      }
    }
    return out;
  }

  /** Contracts the catalog says an address deployed (as sender or as deploying contract), in catalog order. */
  deployments(catalog: Catalog, chain: ChainInfo, deployer: string): ContractMetadata[] {
    const who = deployer.toLowerCase();
    const known = [
      ...this.evm.contractsOf(chain.chainId).map((c) => c.address),
      ...this.evm.namedOf(chain.chainId).map((a) => a.address),
      ...this.evm.internalOwnersOf(chain.chainId),
    ];
    return known.flatMap((a) => {
      const m = catalog.contract(chain, a);
      const d = m?.deploymentDetails;
      return m && d && (d.deployerAddress.toLowerCase() === who || d.deployerContractAddress?.toLowerCase() === who) ? [m] : [];
    });
  }
}
