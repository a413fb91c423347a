// Cross-chain (ICM / Teleporter) messages between a few blockchains of each network, the AVAX
// supply, and the metrics service's ICM message counts, with their routes.
//
// Message i of a network is sent at a time that grows with i (a slot of SLOT seconds each, at a
// seeded offset inside it), so any message and the number sent by a time are known without
// generating the rest. Each has a seeded delivery delay: it is listed `pending` until then and
// `delivered` after, with its destination transaction. Messages from a blockchain the service does
// not index are unknown to it until delivered, then listed as `delivered_source_not_indexed`
// (no source transaction), at their delivery time. The listing is newest first by that time
// (sent time, or delivery time without a source). Identities that tests and the demo name (the
// blockchains, the addresses) do not depend on the seed; the rest does.
import { cb58Encode, isBlockchainId, isEvmChainId, type Network } from '../ids.js';
import { ExactNumber } from '../json.js';
import { amountOf, edgeClassAt, randomClass } from './amounts.js';
import { badRequest } from './errors.js';
import { CHAINS, WORLD_NOW, type Erc20Token } from './evm.js';
import { Rng, labelBytes, toHex } from './hash.js';
import { checksumAddress } from './keccak.js';
import { fromArray, lowerBound, type Listing } from './listing.js';
import { WEIGHTS } from './ratelimit.js';
import type { RouteContext, RouteTable } from './route.js';
import { stakingNetwork, type StakingNetwork } from './staking.js';
import { buildSubnets } from './subnets.js';
import type { World } from './world.js';
import { evmAddress, intParam, networkParam, pageAt, single } from './params.js';

const DAY = 86_400;
/** Seconds between two messages of a network, on average: one slot each. */
export const ICM_SLOT = 1800;
/** The first message of each network is sent in the slot starting here. */
export const ICM_START = WORLD_NOW - 14 * DAY;
/** TeleporterMessenger's address, the same on every chain (deployed by Nick's method). */
export const ICM_CONTRACT = '0x253b2784c75e510dD0fF1da844684a1aC0aa5fcf';
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

export type IcmStatus = 'pending' | 'delivered' | 'delivered_source_not_indexed';

export interface IcmChain {
  blockchainId: string;
  evmChainId: string;
  /** The service indexes it: messages from it are listed from their sending on. */
  indexed: boolean;
}

/** A relayer's fee: an ERC-20 token, its amount as a decimal string. */
export interface IcmRewardDetails extends Erc20Token {
  value: string;
}

export interface IcmMessage {
  messageId: string;
  icmContractAddress: string;
  sourceBlockchainId: string;
  destinationBlockchainId: string;
  sourceEvmChainId: string;
  destinationEvmChainId: string;
  messageNonce: string;
  from: string;
  to: string;
  data: string;
  messageExecuted: boolean;
  receipts: Array<{ receivedMessageNonce: string; relayerRewardAddress: string }>;
  receiptDelivered: boolean;
  rewardDetails: IcmRewardDetails;
  sourceTransaction?: { txHash: string; timestamp: number; gasSpent: string };
  destinationTransaction?: { txHash: string; timestamp: number; gasSpent: string; rewardRedeemer: string; delivererAddress: string };
  status: IcmStatus;
}

/** A message as generated: what it is whatever the time, and when it is delivered. */
interface Sent {
  index: number;
  sentAt: number;
  deliveredAt: number;
  src: IcmChain;
  dst: IcmChain;
  /** The message as served once delivered; before, without its destination side. */
  delivered: IcmMessage;
}

export interface IcmQuery {
  sourceBlockchainId?: string;
  destinationBlockchainId?: string;
  blockchainId?: string;
  from?: string;
  to?: string;
  /** The address endpoint: messages sent from or to it. */
  address?: string;
}

/** Seed-independent senders and recipients of a network (the demo and tests filter by them). */
export function icmAddresses(net: StakingNetwork): { senders: string[]; recipients: string[] } {
  const of = (role: string) => Array.from({ length: 5 }, (_, k) => checksumAddress(labelBytes(`icm:${net}:${role}:${k}`, 20)));
  return { senders: of('sender'), recipients: of('recipient') };
}

const FEE_TOKENS: ReadonlyArray<Omit<IcmRewardDetails, 'value'>> = [
  { address: '0xB31f66AA3C1e785363F0875A1B74E27b85FD66c7', name: 'Wrapped AVAX', symbol: 'WAVAX', decimals: 18, logoUri: 'https://images.example/wavax.svg', ercType: 'ERC-20', price: { currencyCode: 'usd', value: 27.41 } },
  { address: '0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E', name: 'USD Coin', symbol: 'USDC', decimals: 6, ercType: 'ERC-20', price: { currencyCode: 'usd', value: 1.0001 } },
  // A dust token priced with more digits than a double holds.
  { address: '0x5425890298aed601595a70AB815c96711a31Bc65', name: 'Lake Dust', symbol: 'DUST', decimals: 18, ercType: 'ERC-20', price: { currencyCode: 'usd', value: new ExactNumber('0.000000012345678901234567') } },
  { address: '0x9702230A8Ea53601f5cD2dc00fDBc13d4dF4A8c7', name: 'Tether USD', symbol: 'USDt', decimals: 6, ercType: 'ERC-20' },
];
const NO_FEE: Omit<IcmRewardDetails, 'value'> = { address: ZERO_ADDRESS, name: '', symbol: '', decimals: 0, ercType: 'ERC-20' };

function hex32(r: Rng): string {
  return '0x' + r.hex(32);
}

/** The ICM world of one seed: per network, its blockchains and messages. */
export class IcmWorld {
  private readonly chainsOf = new Map<StakingNetwork, IcmChain[]>();
  private readonly cache = new Map<string, Sent>();

  constructor(readonly seed: number) {}

  /** The blockchains messages travel between: the C-Chain, subnet chains, and one the service does not index. */
  chains(net: StakingNetwork): IcmChain[] {
    let out = this.chainsOf.get(net);
    if (out) return out;
    const c = CHAINS.find((x) => x.chainId === (net === 'mainnet' ? '43114' : '43113'))!;
    out = [{ blockchainId: c.blockchainId, evmChainId: c.chainId, indexed: true }];
    if (net === 'mainnet') {
      const lake = CHAINS.find((x) => x.chainId === '432204')!;
      out.push({ blockchainId: lake.blockchainId, evmChainId: lake.chainId, indexed: true });
    }
    // Subnet chains of the world's subnets listing: the first two with an EVM chain id.
    const known = new Set(out.map((c) => c.blockchainId));
    const evm = buildSubnets(this.seed, net).flatMap((s) => s.blockchains).filter((b) => b.evmChainId !== undefined && !known.has(b.blockchainId));
    for (const b of evm.slice(0, 2)) out.push({ blockchainId: b.blockchainId, evmChainId: String(b.evmChainId), indexed: true });
    out.push({ blockchainId: cb58Encode(labelBytes(`icm:${net}:unindexed`, 32)), evmChainId: net === 'mainnet' ? '777333' : '777334', indexed: false });
    this.chainsOf.set(net, out);
    return out;
  }

  /** When message i is sent: inside its slot, increasing with i. */
  sentAt(net: StakingNetwork, i: number): number {
    return ICM_START + i * ICM_SLOT + Rng.of(this.seed, 'icm-at', net, i).int(ICM_SLOT);
  }

  /** Messages sent at or before t. */
  sentBy(net: StakingNetwork, t: number): number {
    if (t < ICM_START) return 0;
    const hi = Math.floor((t - ICM_START) / ICM_SLOT) + 1;
    return lowerBound(0, hi, (i) => this.sentAt(net, i) > t);
  }

  message(net: StakingNetwork, i: number): Sent {
    const key = `${net}:${i}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const m = this.generate(net, i);
    // Messages are a pure function of (seed, network, index); a listing asks for all of them each page.
    if (this.cache.size >= 200_000) this.cache.clear();
    this.cache.set(key, m);
    return m;
  }

  private generate(net: StakingNetwork, i: number): Sent {
    const r = Rng.of(this.seed, 'icm', net, i);
    const chains = this.chains(net);
    const indexed = chains.filter((c) => c.indexed);
    const src = r.chance(0.06) ? chains[chains.length - 1]! : r.pick(indexed);
    const dst = r.pick(indexed.filter((c) => c !== src));
    const sentAt = this.sentAt(net, i);
    const u = r.float();
    // Most deliver within seconds, some within hours, a few wait days or weeks (no relayer).
    const delay = u < 0.8 ? r.range(3, 90) : u < 0.95 ? r.range(600, 6 * 3600) : u < 0.985 ? r.range(DAY, 3 * DAY) : r.range(20 * DAY, 60 * DAY);
    const { senders, recipients } = icmAddresses(net);
    const edge = edgeClassAt(i);
    const fee = edge ? r.pick(FEE_TOKENS) : r.chance(0.5) ? NO_FEE : r.pick(FEE_TOKENS);
    const amount = fee === NO_FEE ? '0' : amountOf(edge ?? randomClass(r), r, fee.decimals);
    const receipts = Array.from({ length: r.int(4) }, () => ({ receivedMessageNonce: String(r.range(1, 5000)), relayerRewardAddress: checksumAddress(r.bytes(20)) }));
    const delivered: IcmMessage = {
      messageId: toHex(Rng.of(this.seed, 'icm-id', net, i).bytes(32)),
      icmContractAddress: ICM_CONTRACT,
      sourceBlockchainId: src.blockchainId,
      destinationBlockchainId: dst.blockchainId,
      sourceEvmChainId: src.evmChainId,
      destinationEvmChainId: dst.evmChainId,
      messageNonce: String(1 + i),
      from: r.pick(senders),
      to: r.pick(recipients),
      data: '0x' + r.hex(32 * r.range(1, 6)),
      messageExecuted: r.chance(0.96),
      receipts,
      receiptDelivered: r.chance(0.5),
      rewardDetails: { ...fee, value: amount },
      sourceTransaction: { txHash: hex32(r), timestamp: sentAt, gasSpent: String(r.range(90_000, 400_000)) },
      destinationTransaction: {
        txHash: hex32(r), timestamp: sentAt + delay, gasSpent: String(r.range(150_000, 900_000)),
        rewardRedeemer: checksumAddress(r.bytes(20)), delivererAddress: checksumAddress(r.bytes(20)),
      },
      status: 'delivered',
    };
    if (!src.indexed) {
      delete delivered.sourceTransaction;
      delivered.status = 'delivered_source_not_indexed';
    }
    return { index: i, sentAt, deliveredAt: sentAt + delay, src, dst, delivered };
  }

  /** A message as the service serves it at time t; undefined while the service does not know it. */
  served(m: Sent, t: number): IcmMessage | undefined {
    if (t >= m.deliveredAt) return m.delivered;
    if (!m.src.indexed) return undefined;
    const { destinationTransaction: _d, ...pending } = m.delivered;
    return { ...pending, messageExecuted: false, receiptDelivered: false, status: 'pending' };
  }

  /** When a served message is listed (the listing is newest first by it). */
  static listedAt(m: IcmMessage): number {
    return m.sourceTransaction?.timestamp ?? m.destinationTransaction!.timestamp;
  }

  /** The messages of a network at time t matching q, newest first (ties: by message id). */
  list(net: StakingNetwork, q: IcmQuery, t: number): IcmMessage[] {
    const out: IcmMessage[] = [];
    const n = this.sentBy(net, t);
    const lower = (s: string) => s.toLowerCase();
    for (let i = 0; i < n; i++) {
      const m = this.served(this.message(net, i), t);
      if (!m || !matches(m, q, lower)) continue;
      out.push(m);
    }
    return out.sort((a, b) => IcmWorld.listedAt(b) - IcmWorld.listedAt(a) || (a.messageId < b.messageId ? -1 : a.messageId > b.messageId ? 1 : 0));
  }

  /**
   * Messages per interval as the metrics service counts them: by the sending time of every
   * message sent by t (delivered or not, the unindexed source's once delivered), grouped.
   */
  counts(net: StakingNetwork, q: IcmCountQuery, t: number): IcmCount[] {
    const n = this.sentBy(net, t);
    const groups = new Map<string, IcmCount>();
    for (let i = 0; i < n; i++) {
      const s = this.message(net, i);
      if (!this.served(s, t)) continue;
      if (q.srcBlockchainId && s.src.blockchainId !== q.srcBlockchainId) continue;
      if (q.destBlockchainId && s.dst.blockchainId !== q.destBlockchainId) continue;
      const at = s.src.indexed ? s.sentAt : s.deliveredAt;
      const ts = intervalStart(at, q.timeInterval);
      if (q.startTimestamp !== undefined && ts < q.startTimestamp) continue;
      if (q.endTimestamp !== undefined && ts >= q.endTimestamp) continue;
      const src = q.groupBy.includes('srcBlockchainId') || q.srcBlockchainId ? s.src.blockchainId : 'all';
      const dst = q.groupBy.includes('destBlockchainId') || q.destBlockchainId ? s.dst.blockchainId : 'all';
      const k = `${ts}|${src}|${dst}`;
      const g = groups.get(k);
      if (g) g.value++;
      else groups.set(k, { value: 1, timestamp: ts, srcBlockchainId: src, destBlockchainId: dst });
    }
    return [...groups.values()].sort((a, b) => b.timestamp - a.timestamp || cmp(a.srcBlockchainId, b.srcBlockchainId) || cmp(a.destBlockchainId, b.destBlockchainId));
  }

  /** AVAX supply as of t: amounts in AVAX with up to 18 decimals that grow (or burn) with time, updated every 15 minutes. */
  supply(t: number): AvaxSupply {
    const at = Math.max(0, Math.floor(t / 900) * 900);
    const k = BigInt(Math.floor((at - 1_600_000_000) / 900));
    const r = Rng.of(this.seed, 'supply', at);
    const scaled = (base: bigint, perStep: bigint) => base + perStep * k + r.bigBelow(10n ** 15n);
    const avax = (v: bigint, decimals = 18) => {
      const s = v.toString().padStart(decimals + 1, '0');
      const frac = s.slice(-decimals).replace(/0+$/, '');
      return frac ? `${s.slice(0, -decimals)}.${frac}` : s.slice(0, -decimals);
    };
    const E18 = 10n ** 18n;
    const pBurned = scaled(15_000n * E18, 3n * 10n ** 15n);
    const cBurned = scaled(4_800_000n * E18, 2n * 10n ** 17n);
    const xBurned = scaled(45_000n * E18, 10n ** 14n);
    const rewards = scaled(99_000_000n * E18, 4n * 10n ** 18n);
    const total = 360_000_000n * E18 + rewards - pBurned - cBurned - xBurned;
    const locked = scaled(36_000_000n * E18, 0n);
    return {
      circulatingSupply: avax(total - locked), totalSupply: avax(total), totalPBurned: avax(pBurned), totalCBurned: avax(cBurned),
      totalXBurned: avax(xBurned), totalStaked: avax(scaled(199_000_000n * E18, 10n ** 18n)), totalLocked: avax(locked),
      totalRewards: avax(rewards), lastUpdated: new Date((at - 1) * 1000 + Number(k % 1000n)).toISOString(), genesisUnlock: '360000000',
      l1ValidatorFees: avax(scaled(6_700n * E18, 10n ** 15n)),
    };
  }
}

export interface AvaxSupply {
  circulatingSupply: string;
  totalSupply: string;
  totalPBurned: string;
  totalCBurned: string;
  totalXBurned: string;
  totalStaked: string;
  totalLocked: string;
  totalRewards: string;
  lastUpdated: string;
  genesisUnlock: string;
  l1ValidatorFees: string;
}

export const ICM_TIME_INTERVALS = ['hour', 'day', 'week', 'month'] as const;
export type IcmTimeInterval = (typeof ICM_TIME_INTERVALS)[number];
export const ICM_GROUP_BY = ['srcBlockchainId', 'destBlockchainId', 'srcBlockchainId,destBlockchainId'] as const;

export interface IcmCountQuery {
  srcBlockchainId?: string;
  destBlockchainId?: string;
  groupBy: string;
  timeInterval: IcmTimeInterval;
  startTimestamp?: number;
  endTimestamp?: number;
}

export interface IcmCount {
  value: number;
  timestamp: number;
  srcBlockchainId: string;
  destBlockchainId: string;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Start of the interval holding t (UTC; weeks from Monday, months from the 1st). */
export function intervalStart(t: number, interval: IcmTimeInterval): number {
  if (interval === 'hour') return t - (t % 3600);
  const day = t - (t % DAY);
  if (interval === 'day') return day;
  if (interval === 'week') return day - (((new Date(day * 1000).getUTCDay() + 6) % 7) * DAY);
  const d = new Date(day * 1000);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000;
}

function matches(m: IcmMessage, q: IcmQuery, lower: (s: string) => string): boolean {
  const side = (want: string | undefined, id: string, evm: string) => want === undefined || want === id || want === evm;
  if (!side(q.sourceBlockchainId, m.sourceBlockchainId, m.sourceEvmChainId)) return false;
  if (!side(q.destinationBlockchainId, m.destinationBlockchainId, m.destinationEvmChainId)) return false;
  if (q.blockchainId !== undefined && q.blockchainId !== m.sourceBlockchainId && q.blockchainId !== m.destinationBlockchainId) return false;
  if (q.from !== undefined && lower(m.from) !== q.from) return false;
  if (q.to !== undefined && lower(m.to) !== q.to) return false;
  if (q.address !== undefined && lower(m.from) !== q.address && lower(m.to) !== q.address) return false;
  return true;
}

const worlds = new Map<number, IcmWorld>();

/** The ICM world of a simulated world (one per seed; time is the world's). */
export function icmOf(world: Pick<World, 'seed'>): IcmWorld {
  let w = worlds.get(world.seed);
  if (!w) {
    w = new IcmWorld(world.seed);
    worlds.set(world.seed, w);
  }
  return w;
}

// ---- routes ----

function networkOf(q: URLSearchParams): Network {
  return networkParam(single(q, 'network') ?? 'mainnet');
}

function chainRef(q: URLSearchParams, name: string, evmToo: boolean): string | undefined {
  const raw = single(q, name);
  if (raw === undefined) return undefined;
  if (isBlockchainId(raw) || (evmToo && isEvmChainId(raw))) return raw;
  throw badRequest(evmToo ? `${name} must be a base58 blockchain id or an EVM chain id, got "${raw}"` : `${name} must be a base58 blockchain id, got "${raw}"`);
}

function pageOf<T>(ctx: RouteContext, field: string, key: string, list: (t: number) => Listing<T>, pageSize: number, tokens: 'data' | 'metrics'): object {
  const { items, nextPageToken } = pageAt(ctx, key, pageSize, tokens, list);
  return nextPageToken === undefined ? { [field]: items } : { nextPageToken, [field]: items };
}

function optionalAddress(q: URLSearchParams, name: string): string | undefined {
  const raw = single(q, name);
  return raw === undefined ? undefined : evmAddress(raw, name);
}

function messages(ctx: RouteContext, address?: string): unknown {
  const q = ctx.query;
  const network = networkOf(q);
  const pageSize = intParam(q, 'pageSize', 1, 100, 10)!;
  const query: IcmQuery = address !== undefined
    ? { address: evmAddress(address, 'address') }
    : {
        ...defined('sourceBlockchainId', chainRef(q, 'sourceBlockchainId', true)),
        ...defined('destinationBlockchainId', chainRef(q, 'destinationBlockchainId', true)),
        ...defined('blockchainId', chainRef(q, 'blockchainId', false)),
        ...defined('from', optionalAddress(q, 'from')),
        ...defined('to', optionalAddress(q, 'to')),
      };
  const key = JSON.stringify(['icmMessages', network, query]);
  const icm = icmOf(ctx.world);
  return pageOf(ctx, 'messages', key, (t) => fromArray(icm.list(stakingNetwork(network), query, t)), pageSize, 'data');
}

function defined<K extends string>(k: K, v: string | undefined): { [P in K]?: string } {
  return (v === undefined ? {} : { [k]: v }) as { [P in K]?: string };
}

function supply(ctx: RouteContext): unknown {
  return icmOf(ctx.world).supply(ctx.world.now);
}

function icmTimeseries(ctx: RouteContext): unknown {
  const q = ctx.query;
  const network = networkOf(q);
  const srcBlockchainId = chainRef(q, 'srcBlockchainId', false);
  const destBlockchainId = chainRef(q, 'destBlockchainId', false);
  const timeInterval = (single(q, 'timeInterval') ?? 'day') as IcmTimeInterval;
  if (!ICM_TIME_INTERVALS.includes(timeInterval)) throw badRequest(`timeInterval must be one of: ${ICM_TIME_INTERVALS.join(', ')}`);
  const groupBy = single(q, 'groupBy') ?? '';
  if (groupBy !== '' && !(ICM_GROUP_BY as readonly string[]).includes(groupBy)) throw badRequest(`groupBy must be one of: ${ICM_GROUP_BY.join(', ')}`);
  const startTimestamp = intParam(q, 'startTimestamp', 0, undefined);
  const endTimestamp = intParam(q, 'endTimestamp', 0, undefined);
  if (startTimestamp !== undefined && endTimestamp !== undefined && startTimestamp > endTimestamp) throw badRequest('startTimestamp must not be greater than endTimestamp');
  const pageSize = intParam(q, 'pageSize', 1, 2160, 100)!;
  const cq: IcmCountQuery = {
    groupBy, timeInterval, ...defined('srcBlockchainId', srcBlockchainId), ...defined('destBlockchainId', destBlockchainId),
    ...(startTimestamp !== undefined ? { startTimestamp } : {}), ...(endTimestamp !== undefined ? { endTimestamp } : {}),
  };
  const key = JSON.stringify(['icmTimeseries', network, cq]);
  const icm = icmOf(ctx.world);
  return pageOf(ctx, 'results', key, (t) => fromArray(icm.counts(stakingNetwork(network), cq, t)), pageSize, 'metrics');
}

export const ICM_ROUTES: RouteTable = [
  { pattern: ['v1', 'icm', 'messages'], route: { name: 'icmMessages', service: 'data', weight: WEIGHTS.icmMessages, handle: (ctx) => messages(ctx) } },
  { pattern: ['v1', 'icm', 'addresses', null, 'messages'], route: { name: 'icmAddressMessages', service: 'data', weight: WEIGHTS.icmMessages, handle: (ctx) => messages(ctx, ctx.params[0]!) } },
  { pattern: ['v1', 'avax', 'supply'], route: { name: 'avaxSupply', service: 'data', weight: WEIGHTS.avaxSupply, handle: supply } },
  { pattern: ['v2', 'icm', 'timeseries'], route: { name: 'icmTimeseries', service: 'metrics', weight: WEIGHTS.icmTimeseries, handle: icmTimeseries } },
];

