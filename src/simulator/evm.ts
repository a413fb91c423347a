// The EVM side of the simulated world: chains, token contracts, addresses, and the token transfers
// and internal transactions, each produced on demand from (seed, listing, index).
import type { ExactNumber } from '../json.js';
import { cb58Encode } from '../ids.js';
import { amountOf, edgeClassAt, randomClass } from './amounts.js';
import { Rng, hashKey, labelBytes } from './hash.js';
import { checksumAddress } from './keccak.js';
import { descending, lowerBound, type Listing } from './listing.js';

/** The world's "now" unless it is given a clock: 2025-11-01T00:00:00Z, in Unix seconds. */
export const WORLD_NOW = 1_761_955_200;

export type ErcType = 'ERC-20' | 'ERC-721' | 'ERC-1155';

export interface RichAddress {
  name?: string;
  symbol?: string;
  decimals?: number;
  logoUri?: string;
  address: string;
}

export interface Money {
  currencyCode: string;
  /** A JSON number; an ExactNumber where a double would not hold the price's digits. */
  value: number | ExactNumber;
}

export interface Erc20Token {
  address: string;
  name: string;
  symbol: string;
  decimals: number;
  logoUri?: string;
  ercType: 'ERC-20';
  price?: Money;
}

export interface NftMetadata {
  indexStatus: string;
  metadataLastUpdatedTimestamp?: number;
  name?: string;
  symbol?: string;
  imageUri?: string;
  description?: string;
  animationUri?: string;
  externalUrl?: string;
  background?: string;
  attributes?: string;
  decimals?: number;
  properties?: string;
}

export interface Erc721Token {
  address: string;
  name: string;
  symbol: string;
  ercType: 'ERC-721';
  tokenId: string;
  tokenUri: string;
  metadata: NftMetadata;
  ownerAddress?: string;
}

export interface Erc1155Token {
  address: string;
  ercType: 'ERC-1155';
  tokenId: string;
  tokenUri: string;
  metadata: NftMetadata;
}

/** Fields every block-level item (transfer, internal transaction) carries. */
interface BlockItem {
  blockNumber: string;
  blockTimestamp: number;
  blockHash: string;
  txHash: string;
  from: RichAddress;
  to: RichAddress;
}

interface TransferBase extends BlockItem {
  logIndex: number;
}
export interface Erc20Transfer extends TransferBase {
  value: string;
  erc20Token: Erc20Token;
}
export interface Erc721Transfer extends TransferBase {
  erc721Token: Erc721Token;
}
export interface Erc1155Transfer extends TransferBase {
  value: string;
  erc1155Token: Erc1155Token;
}
export type Transfer = Erc20Transfer | Erc721Transfer | Erc1155Transfer;

export const INTERNAL_TX_TYPES = [
  'UNKNOWN', 'CALL', 'CREATE', 'CREATE2', 'CREATE3', 'CALLCODE', 'DELEGATECALL', 'STATICCALL',
] as const;
export type InternalTxType = (typeof INTERNAL_TX_TYPES)[number];

export interface InternalTransaction extends BlockItem {
  internalTxType: InternalTxType;
  value: string;
  isReverted: boolean;
  gasUsed: string;
  gasLimit: string;
}

export interface ChainInfo {
  chainId: string;
  blockchainId: string;
  name: string;
  network: 'mainnet' | 'fuji';
  latestBlock: number;
  blockTimeSeconds: number;
  /** First day of its metric series (Unix seconds). */
  metricsSince: number;
}

export interface ContractInfo {
  chainId: string;
  address: string;
  ercType: ErcType;
  name: string;
  symbol: string;
  decimals: number;
  logoUri?: string;
  priceUsd?: number;
}

export interface BlockRange {
  /** inclusive */
  startBlock?: number;
  /** exclusive */
  endBlock?: number;
}

export const CHAINS: readonly ChainInfo[] = [
  {
    chainId: '43114', blockchainId: '2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5', name: 'Avalanche C-Chain',
    network: 'mainnet', latestBlock: 71_234_567, blockTimeSeconds: 2, metricsSince: Date.UTC(2023, 10, 1) / 1000,
  },
  {
    chainId: '43113', blockchainId: 'yH8D7ThNJkxmtkuv2jgBa4P1Rn3Qpr4pPr7QYNfcdoS6k6HWp', name: 'Avalanche Fuji C-Chain',
    network: 'fuji', latestBlock: 47_654_321, blockTimeSeconds: 2, metricsSince: Date.UTC(2023, 10, 1) / 1000,
  },
  {
    chainId: '432204', blockchainId: cb58Encode(labelBytes('blockchain:432204', 32)), name: 'Lakeside Subnet',
    network: 'mainnet', latestBlock: 10_987_654, blockTimeSeconds: 5, metricsSince: Date.UTC(2024, 2, 1) / 1000,
  },
];

interface ContractSpec {
  ercType: ErcType;
  name: string;
  symbol: string;
  decimals?: number;
  logo?: boolean;
  priceUsd?: number;
}

const CONTRACT_SPECS: Record<string, ContractSpec[]> = {
  '43114': [
    { ercType: 'ERC-20', name: 'Wrapped AVAX', symbol: 'WAVAX', decimals: 18, logo: true, priceUsd: 27.41 },
    { ercType: 'ERC-20', name: 'USD Coin', symbol: 'USDC', decimals: 6, logo: true, priceUsd: 1 },
    { ercType: 'ERC-20', name: 'Lake Meme "Ω" Token', symbol: 'LMΩ', decimals: 0 },
    { ercType: 'ERC-721', name: 'Chain Punks', symbol: 'CPUNK' },
    { ercType: 'ERC-721', name: 'Lake Explorers', symbol: 'LAKEX' },
    { ercType: 'ERC-1155', name: 'Game Items', symbol: 'ITEM' },
    { ercType: 'ERC-1155', name: 'Ticket Stubs', symbol: 'TIX' },
  ],
  '43113': [
    { ercType: 'ERC-20', name: 'Wrapped AVAX', symbol: 'WAVAX', decimals: 18, logo: true },
    { ercType: 'ERC-20', name: 'Test USD', symbol: 'TUSD', decimals: 6 },
    { ercType: 'ERC-721', name: 'Fuji Faucets', symbol: 'FAUCET' },
    { ercType: 'ERC-1155', name: 'Testnet Badges', symbol: 'BADGE' },
  ],
  '432204': [
    { ercType: 'ERC-20', name: 'Lakeside Gas', symbol: 'LKG', decimals: 8, logo: true, priceUsd: 0.0042 },
    { ercType: 'ERC-721', name: 'Lakeside Deeds', symbol: 'DEED' },
    { ercType: 'ERC-1155', name: 'Lakeside Fish', symbol: 'FISH' },
  ],
};

/** Addresses with internal transactions per chain; index 0 is a named contract, the rest plain. */
const INTERNAL_OWNERS: Record<string, number> = { '43114': 3, '43113': 2, '432204': 2 };

const NAMED_ADDRESSES: ReadonlyArray<Omit<RichAddress, 'address'>> = [
  { name: 'LakeSwap Router' },
  { name: 'LakeSwap LP', symbol: 'LSLP', decimals: 18, logoUri: 'https://images.example.invalid/lakeswap-lp.svg' },
  { name: 'Bridge Vault' },
  { name: 'Staked AVAX', symbol: 'sAVAX', decimals: 18, logoUri: 'https://images.example.invalid/savax.png' },
  { name: 'Multicall3' },
  { name: 'Ünïcødé Treasury 🏦', symbol: 'TRSY', decimals: 9 },
  { name: 'Lending Pool', symbol: 'LEND', decimals: 18 },
  { name: 'Aggregator' },
];

const WALLETS_PER_CHAIN = 96;
/** One transfer in this many has an active address (an internal-transaction owner) for a party. */
const ACTIVE_SHARE = 16;
const DAY_SECONDS = 86_400;
/** New items per day after WORLD_NOW, per listing, at scale 1 (multiples of GROUP). */
export const TRANSFERS_PER_DAY = 48;
export const INTERNALS_PER_DAY = 16;
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
export const GROUP = 8;

/** Identities do not depend on the seed, so DEMO names real ids whatever the seed. */
export function contractAddress(chainId: string, i: number): string {
  return checksumAddress(labelBytes(`contract:${chainId}:${i}`, 20));
}

export function internalOwnerAddress(chainId: string, i: number): string {
  return checksumAddress(labelBytes(`internal-owner:${chainId}:${i}`, 20));
}

/** Address of the i-th named (non-token) contract of a chain; they have metadata but no transfers. */
export function namedAddress(chainId: string, i: number): string {
  return checksumAddress(labelBytes(`named:${chainId}:${i}`, 20));
}

const NFT_STATUSES = [
  'UNKNOWN', 'MISSING_TOKEN', 'INVALID_TOKEN_URI', 'INVALID_TOKEN_URI_SCHEME', 'UNREACHABLE_TOKEN_URI',
  'THROTTLED_TOKEN_URI', 'METADATA_CONTENT_TOO_LARGE', 'INVALID_METADATA', 'INVALID_METADATA_JSON', 'UNINDEXED',
];

/**
 * Where the items of one listing sit on the chain. Items come in groups of GROUP consecutive
 * indices; a group occupies 1..6 blocks inside its own `stride` blocks, so block numbers never
 * decrease with the index and a block's items are consecutive.
 *
 * The `count` items are the ones on chain at WORLD_NOW (all below the head at WORLD_NOW). Items
 * from index `count` on are the world after WORLD_NOW (`future`): `perDay` of them per day, in
 * groups spread evenly over each day's blocks above the WORLD_NOW head, so that by
 * WORLD_NOW + k days exactly k * perDay of them are on chain. Every item is a pure function of
 * its index, so an item never changes once its block is visible.
 */
export interface Layout {
  key: number;
  count: number;
  firstBlock: number;
  stride: number;
  future?: FutureLayout;
}

export interface FutureLayout {
  key: number;
  /** first block after the WORLD_NOW head */
  base: number;
  blocksPerDay: number;
  groupsPerDay: number;
}

interface Slot {
  block: number;
  /** hashing key of the group (differs between the WORLD_NOW part and the future part) */
  key: number;
  g: number;
  k: number;
  /** position of the item among the items of its block */
  p: number;
}

/** Item j of group g, placed in the `width` blocks from `start`. */
function place(key: number, g: number, j: number, start: number, width: number): Slot {
  const m = 1 + (hashKey(key, g) % Math.min(6, width));
  const k = Math.floor((j * m) / GROUP);
  const w = Math.floor(width / m);
  const block = start + k * w + (hashKey(key, g, k) % w);
  return { block, key, g, k, p: j - Math.ceil((k * GROUP) / m) };
}

export function slotOf(l: Layout, i: number): Slot {
  if (i >= l.count && l.future) return futureSlot(l.future, i - l.count);
  const g = Math.floor(i / GROUP);
  return place(l.key, g, i % GROUP, l.firstBlock + g * l.stride, l.stride);
}

function futureSlot(f: FutureLayout, n: number): Slot {
  const g = Math.floor(n / GROUP);
  const day = Math.floor(g / f.groupsPerDay);
  const q = g % f.groupsPerDay;
  const from = Math.floor((q * f.blocksPerDay) / f.groupsPerDay);
  const to = Math.floor(((q + 1) * f.blocksPerDay) / f.groupsPerDay);
  return place(f.key, g, n % GROUP, f.base + day * f.blocksPerDay + from, to - from);
}

function makeLayout(seed: number, label: string, count: number, chain: ChainInfo, perDay: number): Layout {
  const r = Rng.of(seed, 'layout', label);
  const groups = Math.max(1, Math.ceil(count / GROUP));
  const endBlock = chain.latestBlock - r.int(3000);
  const span = Math.min(r.range(200_000, 12_000_000), endBlock - 1);
  const stride = Math.max(1, Math.floor(span / groups));
  const blocksPerDay = DAY_SECONDS / chain.blockTimeSeconds;
  return {
    key: hashKey(seed, 'listing', label), count, firstBlock: Math.max(1, endBlock - groups * stride), stride,
    future: {
      key: hashKey(seed, 'listing-future', label), base: chain.latestBlock + 1, blocksPerDay,
      groupsPerDay: Math.min(blocksPerDay, Math.max(1, Math.round(perDay / GROUP))),
    },
  };
}

/** Items on chain when the head is `head`: the index of the first item above it. */
export function visibleCount(l: Layout, head: number): number {
  const f = l.future;
  if (!f || head < f.base) return lowerBound(0, l.count, (i) => slotOf(l, i).block > head);
  const upper = (Math.floor((head - f.base) / f.blocksPerDay) + 1) * f.groupsPerDay * GROUP;
  return l.count + lowerBound(0, upper, (n) => futureSlot(f, n).block > head);
}

/** Index range [lo, hi) of the items whose block lies in the range, among the first `visible`. */
export function indexRange(l: Layout, range: BlockRange, visible = l.count): { lo: number; hi: number } {
  const lo = range.startBlock === undefined ? 0 : lowerBound(0, visible, (i) => slotOf(l, i).block >= range.startBlock!);
  const hi = range.endBlock === undefined ? visible : lowerBound(0, visible, (i) => slotOf(l, i).block >= range.endBlock!);
  return { lo, hi: Math.max(lo, hi) };
}

/** Head block of a chain at time `at` (Unix seconds): the newest block with timestamp <= at. */
export function headAt(chain: ChainInfo, at: number): number {
  return chain.latestBlock + Math.floor((at - WORLD_NOW) / chain.blockTimeSeconds);
}

export class EvmWorld {
  readonly chains = CHAINS;
  private readonly contracts = new Map<string, ContractInfo[]>();
  private readonly contractByKey = new Map<string, ContractInfo>();
  private readonly owners = new Map<string, RichAddress[]>();
  private readonly wallets = new Map<string, RichAddress[]>();
  private readonly named = new Map<string, RichAddress[]>();
  private readonly layouts = new Map<string, Layout>();

  constructor(readonly seed: number, readonly scale: number) {
    for (const chain of CHAINS) {
      const id = chain.chainId;
      const list = CONTRACT_SPECS[id]!.map((spec, i): ContractInfo => {
        const address = contractAddress(id, i);
        const c: ContractInfo = {
          chainId: id, address, ercType: spec.ercType, name: spec.name, symbol: spec.symbol, decimals: spec.decimals ?? 0,
        };
        if (spec.logo) c.logoUri = `https://images.example.invalid/${id}/${spec.symbol.toLowerCase()}.png`;
        if (spec.priceUsd !== undefined) c.priceUsd = spec.priceUsd;
        return c;
      });
      this.contracts.set(id, list);
      for (const c of list) this.contractByKey.set(`${id}:${c.address.toLowerCase()}`, c);
      this.wallets.set(id, Array.from({ length: WALLETS_PER_CHAIN }, (_, i) => ({
        address: checksumAddress(labelBytes(`wallet:${id}:${i}`, 20)),
      })));
      this.named.set(id, NAMED_ADDRESSES.map((meta, i) => ({ ...meta, address: namedAddress(id, i) })));
      this.owners.set(id, Array.from({ length: INTERNAL_OWNERS[id]! }, (_, i) => {
        const address = internalOwnerAddress(id, i);
        return i === 0 ? { name: 'LakeSwap Factory', address } : { address };
      }));
    }
  }

  /** The wallets of a chain: the addresses most transfers are between. */
  walletsOf(chainId: string): readonly RichAddress[] {
    return this.wallets.get(this.chainOrThrow(chainId).chainId)!;
  }

  /** Named contracts of a chain (a router, a vault, ...): address objects as transfers show them. */
  namedOf(chainId: string): readonly RichAddress[] {
    return this.named.get(this.chainOrThrow(chainId).chainId)!;
  }

  chain(id: string): ChainInfo | undefined {
    return CHAINS.find((c) => c.chainId === id || c.blockchainId === id);
  }

  private chainOrThrow(id: string): ChainInfo {
    const c = this.chain(id);
    if (!c) throw new Error(`unknown chain ${id}`);
    return c;
  }

  contractsOf(chainId: string): readonly ContractInfo[] {
    return this.contracts.get(this.chainOrThrow(chainId).chainId)!;
  }

  contract(chainId: string, address: string): ContractInfo | undefined {
    const c = this.chain(chainId);
    return c && this.contractByKey.get(`${c.chainId}:${address.toLowerCase()}`);
  }

  internalOwnersOf(chainId: string): readonly string[] {
    return this.owners.get(this.chainOrThrow(chainId).chainId)!.map((o) => o.address);
  }

  owner(chainId: string, address: string): RichAddress | undefined {
    return this.owners.get(chainId)?.find((o) => o.address.toLowerCase() === address.toLowerCase());
  }

  private contractOrThrow(chainId: string, address: string): ContractInfo {
    const c = this.contract(chainId, address);
    if (!c) throw new Error(`unknown contract ${address} on chain ${chainId}`);
    return c;
  }

  private layout(chain: ChainInfo, label: string, baseMin: number, baseMax: number, perDay: number): Layout {
    let l = this.layouts.get(label);
    if (!l) {
      const base = Rng.of(this.seed, 'count', label).range(baseMin, baseMax);
      l = makeLayout(this.seed, label, Math.max(1, Math.round(base * this.scale)), chain, perDay * this.scale);
      this.layouts.set(label, l);
    }
    return l;
  }

  transferLayout(chainId: string, contract: string): Layout {
    const chain = this.chainOrThrow(chainId);
    const c = this.contractOrThrow(chain.chainId, contract);
    return this.layout(chain, `transfers:${chain.chainId}:${c.address.toLowerCase()}`, 300, 2000, TRANSFERS_PER_DAY);
  }

  /** Layout of an address's internal transactions; addresses without any get count 0. */
  internalLayout(chainId: string, address: string): Layout {
    const chain = this.chainOrThrow(chainId);
    if (!this.owner(chain.chainId, address)) return { key: 0, count: 0, firstBlock: 1, stride: 1 };
    return this.layout(chain, `internals:${chain.chainId}:${address.toLowerCase()}`, 100, 400, INTERNALS_PER_DAY);
  }

  /** Transfers on chain at `at` (Unix seconds). */
  transferCount(chainId: string, contract: string, at = WORLD_NOW): number {
    return visibleCount(this.transferLayout(chainId, contract), headAt(this.chainOrThrow(chainId), at));
  }

  internalCount(chainId: string, address: string, at = WORLD_NOW): number {
    return visibleCount(this.internalLayout(chainId, address), headAt(this.chainOrThrow(chainId), at));
  }

  /** New items per full day after WORLD_NOW (0 for an address without internal transactions). */
  perDay(l: Layout): number {
    return l.count === 0 || !l.future ? 0 : l.future.groupsPerDay * GROUP;
  }

  blockHash(chain: ChainInfo, block: number): string {
    return '0x' + Rng.of(this.seed, 'block', chain.chainId, block).hex(32);
  }

  blockTimestamp(chain: ChainInfo, block: number): number {
    return WORLD_NOW - (chain.latestBlock - block) * chain.blockTimeSeconds;
  }

  counterparty(chainId: string, r: Rng): RichAddress {
    // Copies, so a consumer mutating an item cannot change later pages.
    return { ...(r.chance(0.25) ? r.pick(this.named.get(chainId)!) : r.pick(this.wallets.get(chainId)!)) };
  }

  /** Transfer i of a contract in ascending (oldest first) order. */
  transferAt(chainId: string, contract: string, i: number): Transfer {
    const chain = this.chainOrThrow(chainId);
    const c = this.contractOrThrow(chain.chainId, contract);
    const l = this.transferLayout(chain.chainId, c.address);
    if (!Number.isSafeInteger(i) || i < 0) throw new RangeError(`transfer index ${i} out of range`);
    const s = slotOf(l, i);
    const r = Rng.of(this.seed, 'transfer', l.key, i);
    const cluster = 1 + (hashKey(s.key, s.g, s.k, 'cluster') % 3);
    const base: TransferBase = {
      blockNumber: String(s.block),
      blockTimestamp: this.blockTimestamp(chain, s.block),
      blockHash: this.blockHash(chain, s.block),
      txHash: '0x' + Rng.of(this.seed, 'tx', s.key, s.g, s.k, Math.floor(s.p / cluster)).hex(32),
      from: this.counterparty(chain.chainId, r),
      to: this.counterparty(chain.chainId, r),
      logIndex: (hashKey(s.key, s.g, s.k, 'log') % 40) + s.p * 3 + r.int(3),
    };
    // One world: the active addresses (the internal-transaction owners, who send native
    // transactions too) trade tokens as well, so that their full transaction listing carries
    // transfers. Decided by a hash, not by r, so every other transfer stays as it was.
    const active = hashKey(this.seed, 'active', l.key, i);
    if (active % ACTIVE_SHARE === 0) {
      const owners = this.owners.get(chain.chainId)!;
      const owner = { ...owners[(active >>> 8) % owners.length]! };
      if (active & 0x10000) base.from = owner;
      else base.to = owner;
    }
    const edge = edgeClassAt(i);
    const u = r.float();
    if (c.ercType === 'ERC-20') {
      if (u < 0.02) base.from = { address: ZERO_ADDRESS };
      else if (u < 0.04) base.to = { address: ZERO_ADDRESS };
      // Key order follows the OpenAPI schema; logoUri and price are optional there.
      const token: Erc20Token = {
        address: c.address, name: c.name, symbol: c.symbol, decimals: c.decimals,
        ...(c.logoUri ? { logoUri: c.logoUri } : {}),
        ercType: 'ERC-20',
        ...(c.priceUsd !== undefined ? { price: { currencyCode: 'usd', value: c.priceUsd } } : {}),
      };
      return { ...base, value: amountOf(edge ?? randomClass(r), r, c.decimals), erc20Token: token };
    }
    if (u < 0.1) base.from = { address: ZERO_ADDRESS };
    if (c.ercType === 'ERC-721') {
      const tokenId = edge ? amountOf(edge, r) : r.chance(0.05) ? amountOf('d78', r) : String(r.int(10_000));
      const token: Erc721Token = {
        address: c.address, name: c.name, symbol: c.symbol, ercType: 'ERC-721', tokenId,
        tokenUri: this.tokenUri(c, tokenId), metadata: this.nftMetadata(c, tokenId),
      };
      if (r.chance(0.5)) token.ownerAddress = base.to.address;
      return { ...base, erc721Token: token };
    }
    const tokenId = String(r.int(48));
    const value = amountOf(edge ?? (r.chance(0.9) ? 'small' : randomClass(r)), r, 0);
    const token: Erc1155Token = {
      address: c.address, ercType: 'ERC-1155', tokenId, tokenUri: this.tokenUri(c, tokenId), metadata: this.nftMetadata(c, tokenId),
    };
    return { ...base, value, erc1155Token: token };
  }

  tokenUri(c: ContractInfo, tokenId: string): string {
    const h = hashKey(this.seed, 'uri', c.address);
    if (h % 3 === 0) return `ipfs://bafybeig${(h >>> 8).toString(36)}lake/${tokenId}.json`;
    if (h % 3 === 1) return `https://meta.example.invalid/${c.symbol.toLowerCase()}/${tokenId}`;
    return `data:application/json;base64,${Buffer.from(JSON.stringify({ name: `${c.name} #${tokenId}` })).toString('base64')}`;
  }

  /** Metadata depends on the token, not the transfer, as an indexer's would. */
  nftMetadata(c: ContractInfo, tokenId: string): NftMetadata {
    const r = Rng.of(this.seed, 'nft', c.address, tokenId);
    if (r.chance(0.15)) {
      const md: NftMetadata = { indexStatus: r.pick(NFT_STATUSES) };
      if (r.chance(0.5)) md.metadataLastUpdatedTimestamp = WORLD_NOW - r.int(200 * 86400);
      return md;
    }
    const md: NftMetadata = {
      indexStatus: 'INDEXED',
      metadataLastUpdatedTimestamp: WORLD_NOW - r.int(400 * 86400),
      name: `${c.name} #${tokenId.length > 12 ? tokenId.slice(0, 6) + '…' : tokenId}`,
      symbol: c.symbol,
      imageUri: `https://img.example.invalid/${c.symbol.toLowerCase()}/${tokenId}.png`,
      description: r.chance(0.2) ? 'Line one\nline "two" \\ with escapes' : `A ${c.name} token`,
    };
    if (r.chance(0.3)) md.externalUrl = `https://lake.example.invalid/${tokenId}`;
    if (r.chance(0.1)) md.animationUri = `https://img.example.invalid/${tokenId}.mp4`;
    if (r.chance(0.2)) md.background = r.hex(3);
    if (c.ercType === 'ERC-721') {
      md.attributes = JSON.stringify([{ trait_type: 'Eyes', value: r.pick(['Blue', 'Green', 'Laser']) }, { trait_type: 'Level', value: r.int(100) }]);
    } else {
      md.decimals = 0;
      md.properties = JSON.stringify({ rarity: r.pick(['common', 'rare', 'legendary']) });
    }
    return md;
  }

  /** Internal transaction i of an address in ascending (oldest first) order. */
  internalAt(chainId: string, address: string, i: number): InternalTransaction {
    const chain = this.chainOrThrow(chainId);
    const owner = this.owner(chain.chainId, address);
    const l = this.internalLayout(chain.chainId, address);
    if (!owner || !Number.isSafeInteger(i) || i < 0) throw new RangeError(`internal tx index ${i} out of range`);
    const s = slotOf(l, i);
    const r = Rng.of(this.seed, 'internal', l.key, i);
    // Several internal calls share one transaction; in some, even from/to/type repeat.
    const cluster = 1 + (hashKey(s.key, s.g, s.k, 'cluster') % 4);
    const txIdx = Math.floor(s.p / cluster);
    const sameShape = hashKey(s.key, s.g, s.k, txIdx, 'same') % 3 === 0;
    const shape = sameShape ? Rng.of(this.seed, 'internal-shape', s.key, s.g, s.k, txIdx) : r;
    const edge = edgeClassAt(i);
    let type: InternalTxType;
    if (i < INTERNAL_TX_TYPES.length) type = INTERNAL_TX_TYPES[i]!;
    else if (edge) type = 'CALL';
    else type = pickType(shape);
    const outgoing = type.startsWith('CREATE') || shape.chance(0.5);
    const other: RichAddress = type.startsWith('CREATE')
      ? { address: checksumAddress(shape.bytes(20)) }
      : this.counterparty(chain.chainId, shape);
    let value = '0';
    if (edge) value = amountOf(edge, r);
    else if (type === 'CALL' || type === 'CALLCODE' || type === 'UNKNOWN') value = amountOf(r.chance(0.85) ? randomClass(r) : 'zero', r);
    else if (type.startsWith('CREATE') && r.chance(0.3)) value = amountOf('typical', r);
    const gasLimit = r.range(2300, 8_000_000);
    const isReverted = i < INTERNAL_TX_TYPES.length ? i % 3 === 1 : r.chance(0.08);
    const gasUsed = isReverted && r.chance(0.5) ? gasLimit : Math.floor(gasLimit * (0.02 + 0.9 * r.float()));
    return {
      blockNumber: String(s.block),
      blockTimestamp: this.blockTimestamp(chain, s.block),
      blockHash: this.blockHash(chain, s.block),
      txHash: '0x' + Rng.of(this.seed, 'itx', s.key, s.g, s.k, txIdx).hex(32),
      from: outgoing ? { ...owner } : other,
      to: outgoing ? other : { ...owner },
      internalTxType: type,
      value,
      isReverted,
      gasUsed: String(gasUsed),
      gasLimit: String(gasLimit),
    };
  }

  /** As served at `at` (Unix seconds): the items of the blocks up to the head then, newest first. */
  listTransfers(chainId: string, contract: string, range: BlockRange = {}, at = WORLD_NOW): Listing<Transfer> {
    const l = this.transferLayout(chainId, contract);
    const { lo, hi } = indexRange(l, range, visibleCount(l, headAt(this.chainOrThrow(chainId), at)));
    return descending(lo, hi, (i) => this.transferAt(chainId, contract, i));
  }

  listInternals(chainId: string, address: string, range: BlockRange = {}, at = WORLD_NOW): Listing<InternalTransaction> {
    const l = this.internalLayout(chainId, address);
    const { lo, hi } = indexRange(l, range, visibleCount(l, headAt(this.chainOrThrow(chainId), at)));
    return descending(lo, hi, (i) => this.internalAt(chainId, address, i));
  }
}

function pickType(r: Rng): InternalTxType {
  const u = r.float();
  if (u < 0.4) return 'CALL';
  if (u < 0.52) return 'STATICCALL';
  if (u < 0.64) return 'DELEGATECALL';
  if (u < 0.72) return 'CREATE';
  if (u < 0.8) return 'CREATE2';
  if (u < 0.84) return 'CREATE3';
  if (u < 0.9) return 'CALLCODE';
  return 'UNKNOWN';
}
