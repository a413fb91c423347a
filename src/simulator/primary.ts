// The platform chain (P-Chain) as the data service lists it: its blocks and its transactions with
// their consumed and emitted UTXOs (docs/services.md, Data service, Platform chain). Every block is
// a pure function of (seed, network, index): block i stands at T0 + i * BLOCK_SECONDS plus a
// jitter below BLOCK_SECONDS, so times rise strictly and a time filter is a binary search. Which
// addresses and L1 validations a transaction touches is a cheap header drawn before the body, so a
// listing filtered by address scans headers and builds only the transactions it serves. After
// WORLD_NOW the chain goes on the same way: a clocked world lists the blocks up to its now.
import { cb58Encode, encodeNodeId, type Network } from '../ids.js';
import { ExactNumber } from '../json.js';
import { CHAINS, WORLD_NOW } from './evm.js';
import { Rng, hashKey, id32, labelBytes, labelled, memoized, toHex } from './hash.js';
import { lowerBound } from './listing.js';
import { AVAX_ASSET_ID, addressBody, nodeIdOf, poolAddress, stakingNetwork, type AssetAmount, type StakingNetwork } from './staking.js';

/** The P-Chain's id, the same on every network; the primary network's subnet id is the same string. */
export const P_CHAIN_ID = '11111111111111111111111111111111LpoYY';
export const PRIMARY_SUBNET_ID = P_CHAIN_ID;
export const X_CHAIN: Record<StakingNetwork, string> = { mainnet: '2oYMBNV4eNHyqk2fjjV5nVQLDbtmNJzq5s3qs3Lo6ftnC6FByM', fuji: '2JVSBoinj9C2J33VntvzYtVJNZdN2NKiwwKjcumHUWEb5DbBrm' };
export const C_CHAIN: Record<StakingNetwork, string> = { mainnet: '2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5', fuji: 'yH8D7ThNJkxmtkuv2jgBa4P1Rn3Qpr4pPr7QYNfcdoS6k6HWp' };
/** What the path's blockchainId takes (the OpenAPI's BlockchainId): ids of the three chains, or their aliases. */
export const BLOCKCHAIN_IDS = [P_CHAIN_ID, ...Object.values(X_CHAIN), ...Object.values(C_CHAIN), 'p-chain', 'x-chain', 'c-chain'];

/** txType of a platform-chain transaction (the OpenAPI's PChainTransactionType). */
export const P_TX_TYPES = [
  'AddValidatorTx', 'AddSubnetValidatorTx', 'AddDelegatorTx', 'CreateChainTx', 'CreateSubnetTx', 'ImportTx', 'ExportTx', 'AdvanceTimeTx',
  'RewardValidatorTx', 'RemoveSubnetValidatorTx', 'TransformSubnetTx', 'AddPermissionlessValidatorTx', 'AddPermissionlessDelegatorTx', 'BaseTx',
  'TransferSubnetOwnershipTx', 'ConvertSubnetToL1Tx', 'RegisterL1ValidatorTx', 'SetL1ValidatorWeightTx', 'DisableL1ValidatorTx',
  'IncreaseL1ValidatorBalanceTx', 'UNKNOWN',
] as const;
export type PTxType = (typeof P_TX_TYPES)[number];
/** What the txTypes filter takes (the OpenAPI's PrimaryNetworkTxType): the above and the X-Chain's own two. */
export const PRIMARY_TX_TYPES: readonly string[] = [...P_TX_TYPES, 'CreateAssetTx', 'OperationTx'];
/** The transactions that stake AVAX on the primary network: what `transactions:listStaking` lists while their stake is locked. */
export const STAKING_TX_TYPES: readonly PTxType[] = ['AddValidatorTx', 'AddDelegatorTx', 'AddPermissionlessValidatorTx', 'AddPermissionlessDelegatorTx'];

const DAY = 86_400;
export const P_BLOCK_SECONDS = 30;
/** The first block's slot: two weeks of history before WORLD_NOW. */
export const P_T0 = WORLD_NOW - 14 * DAY;
const BASE_HEIGHT: Record<StakingNetwork, number> = { mainnet: 21_400_000, fuji: 198_000_000 };
/** Addresses that own UTXOs; the first ones are the staking world's owner and delegator pool. */
const POOL: Record<StakingNetwork, number> = { mainnet: 48, fuji: 16 };
const L1_VALIDATIONS = 6;
/** Nodes that propose blocks and take delegations: the staking world's first validators (nodeIdOf). */
const NODES = 6;
const L1_SUBNETS = 2;
const SUBNETS = 5;
/** A page closes once its transactions hold this many UTXOs (production's "performance threshold"). */
export const UTXO_PAGE_LIMIT = 60;
const NANO = 1_000_000_000n;
const BASE_SUPPLY = 461_802_334_000_000_000n;

/** Non-reward transactions of a standard block, by weight (roughly as the chain has them since Etna). */
const TYPE_WEIGHTS: Array<[PTxType, number]> = [
  ['AddPermissionlessDelegatorTx', 22], ['AddPermissionlessValidatorTx', 8], ['ImportTx', 12], ['ExportTx', 12], ['BaseTx', 14],
  ['IncreaseL1ValidatorBalanceTx', 10], ['RegisterL1ValidatorTx', 4], ['SetL1ValidatorWeightTx', 4], ['DisableL1ValidatorTx', 1],
  ['ConvertSubnetToL1Tx', 1], ['CreateSubnetTx', 1], ['CreateChainTx', 1], ['TransferSubnetOwnershipTx', 1], ['AddSubnetValidatorTx', 2],
  ['RemoveSubnetValidatorTx', 1],
];
const TYPE_TOTAL = TYPE_WEIGHTS.reduce((n, [, w]) => n + w, 0);
const L1_TYPES = new Set<PTxType>(['IncreaseL1ValidatorBalanceTx', 'RegisterL1ValidatorTx', 'SetL1ValidatorWeightTx', 'DisableL1ValidatorTx', 'ConvertSubnetToL1Tx']);

export interface PChainUtxo {
  addresses: string[];
  asset: AssetAmount;
  consumedOnChainId: string;
  createdOnChainId: string;
  utxoId: string;
  amount: string;
  assetId: string;
  blockNumber: string;
  blockTimestamp: number;
  outputIndex: number;
  txHash: string;
  utxoType: 'STAKE' | 'TRANSFER';
  threshold: number;
  platformLocktime: number;
  stakeableLocktime?: number;
  staked: boolean;
  utxoStartTimestamp?: number;
  utxoEndTimestamp?: number;
  rewardType?: 'VALIDATOR' | 'DELEGATOR' | 'VALIDATOR_FEE';
  consumingTxHash?: string;
  consumingBlockNumber?: string;
  consumingBlockTimestamp?: number;
}

export interface L1ValidatorDetail {
  validationId: string;
  validationIdHex: string;
  nodeId: string;
  subnetId: string;
  /** uint64: validation 0 weighs more than a double holds, so it is an ExactNumber. */
  weight: number | ExactNumber;
  remainingBalance: number;
  balanceChange?: number;
  blsCredentials?: { publicKey: string; proofOfPossession: string };
}

export interface PChainTransaction {
  txHash: string;
  txType: PTxType;
  blockTimestamp: number;
  blockNumber: string;
  blockHash: string;
  consumedUtxos: PChainUtxo[];
  emittedUtxos: PChainUtxo[];
  sourceChain?: string;
  destinationChain?: string;
  value: AssetAmount[];
  amountBurned: AssetAmount[];
  amountStaked: AssetAmount[];
  amountL1ValidatorBalanceBurned: AssetAmount[];
  startTimestamp?: number;
  endTimestamp?: number;
  delegationFeePercent?: string;
  nodeId?: string;
  subnetId?: string;
  l1ValidatorManagerDetails?: { blockchainId: string; contractAddress: string };
  l1ValidatorDetails?: L1ValidatorDetail[];
  estimatedReward?: string;
  rewardTxHash?: string;
  rewardAddresses?: string[];
  memo?: string;
  stakingTxHash?: string;
  subnetOwnershipInfo?: { locktime: number; threshold: number; addresses: string[] };
  blsCredentials?: { publicKey: string; proofOfPossession: string };
  blockchainInfo?: { chainName: string; vmId: string; genesisData?: unknown };
}

export interface PrimaryNetworkBlock {
  blockNumber: string;
  blockHash: string;
  parentHash: string;
  blockTimestamp: number;
  blockType: string;
  txCount: number;
  transactions: string[];
  blockSizeBytes: number;
  /** the P-Chain's only */
  l1ValidatorsAccruedFees?: number;
  activeL1Validators?: number;
  currentSupply?: string;
  proposerDetails?: { proposerId: string; proposerParentId: string; proposerNodeId: string; proposerPChainHeight: number; proposerTimestamp: number };
}

/** What a transaction touches, drawn before its body: enough to filter a listing. */
export interface Header {
  block: number;
  k: number;
  type: PTxType;
  /** pool indices of the addresses its UTXOs (or rewards) name */
  addrs: number[];
  /** the L1 validation it concerns */
  l1?: number;
}

export interface PrimaryTxQuery {
  addresses?: readonly string[];
  l1ValidationId?: string;
  txTypes?: readonly string[];
  startTimestamp?: number;
  endTimestamp?: number;
  sortOrder?: 'asc' | 'desc';
  /** the X-Chain's listing by asset: only transactions that move it */
  assetId?: string;
}

export interface TimeRange {
  startTimestamp?: number;
  endTimestamp?: number;
}

/** The C-Chain of each network in the EVM world (evm.ts): its blocks carry the C-Chain's atomic transactions. */
const C_EVM_CHAIN: Record<StakingNetwork, (typeof CHAINS)[number]> = {
  mainnet: CHAINS.find((c) => c.blockchainId === C_CHAIN.mainnet)!,
  fuji: CHAINS.find((c) => c.blockchainId === C_CHAIN.fuji)!,
};

/** The hash of a C-Chain block: the EVM world's (evm.ts blockHash). */
export function cBlockHash(seed: number, net: StakingNetwork, height: number): string {
  return '0x' + Rng.of(seed, 'block', C_EVM_CHAIN[net].chainId, height).hex(32);
}

const X_BASE_HEIGHT: Record<StakingNetwork, number> = { mainnet: 6_100_000, fuji: 3_400_000 };

/** Height of an X-Chain block: three to a P-Chain block index i (0 its exports, 1 its own transactions, 2 its imports). */
export function xBlockHeight(net: StakingNetwork, i: number, phase: 0 | 1 | 2): number {
  return X_BASE_HEIGHT[net] + 3 * i + phase;
}

export function xBlockHash(seed: number, net: StakingNetwork, height: number): string {
  return id32(Rng.of(seed, 'xblockhash', net, height));
}

/** An L1 validation's id (seed-independent, so a pipeline can name it). */
export function l1ValidationId(net: StakingNetwork, v: number): string {
  return labelled(`l1validation:${net}:${v}`, 32, cb58Encode);
}

function l1SubnetId(net: StakingNetwork, s: number): string {
  return labelled(`l1subnet:${net}:${s}`, 32, cb58Encode);
}

function subnetIdOf(net: StakingNetwork, s: number): string {
  return labelled(`psubnet:${net}:${s}`, 32, cb58Encode);
}

function avax(net: StakingNetwork, amount: bigint): AssetAmount {
  return { assetId: AVAX_ASSET_ID[net], name: 'Avalanche', symbol: 'AVAX', denomination: 9, type: 'secp256k1', amount: amount.toString() };
}

/** Transaction bodies kept per world (a few kilobytes each): more than two owners' whole history. */
const TRANSACTIONS_KEPT = 4_096;

const sum = (xs: readonly bigint[]) => xs.reduce((a, b) => a + b, 0n);

export class PrimaryWorld {
  /** Headers of the blocks made so far, per network, in block order (a prefix that only grows). */
  private readonly headers = new Map<StakingNetwork, Header[]>();
  private readonly madeUpTo = new Map<StakingNetwork, number>();
  private readonly cache = new Map<string, number[]>();
  private readonly bodies = new Map<string, PChainTransaction>();
  /** Per network, the blocks each node proposed so far (indices, ascending; a prefix that only grows). */
  private readonly proposed = new Map<StakingNetwork, { upTo: number; byNode: number[][] }>();

  constructor(readonly seed: number) {}

  /** Time of block i: its slot plus a jitter; a commit block follows its proposal by a second. */
  blockTime(net: StakingNetwork, i: number): number {
    if (this.kind(net, i) === 'commit') return this.blockTime(net, i - 1) + 1;
    return P_T0 + i * P_BLOCK_SECONDS + (hashKey(this.seed, 'pjitter', net, i) % (P_BLOCK_SECONDS - 1));
  }

  /** Proposal blocks (a reward) sit at even indices; the block after one commits it. */
  private kind(net: StakingNetwork, i: number): 'standard' | 'proposal' | 'commit' {
    const proposal = (j: number) => j % 2 === 0 && hashKey(this.seed, 'pkind', net, j) % 100 < 9;
    if (proposal(i)) return 'proposal';
    return i % 2 === 1 && proposal(i - 1) ? 'commit' : 'standard';
  }

  /** Index of the newest block at or before t (-1 before the first). */
  headAt(net: StakingNetwork, t: number): number {
    const approx = Math.floor((t - P_T0) / P_BLOCK_SECONDS);
    return lowerBound(Math.max(0, approx - 2), Math.max(0, approx + 2), (i) => this.blockTime(net, i) > t) - 1;
  }

  /** First block at or after t. */
  private firstAtOrAfter(net: StakingNetwork, t: number): number {
    const approx = Math.max(0, Math.floor((t - P_T0) / P_BLOCK_SECONDS));
    return lowerBound(Math.max(0, approx - 2), approx + 2, (i) => this.blockTime(net, i) >= t);
  }

  /** The transactions of block i, as headers (none for a commit block). */
  blockHeaders(net: StakingNetwork, i: number): Header[] {
    const kind = this.kind(net, i);
    if (kind === 'commit') return [];
    const r = Rng.of(this.seed, 'pblock', net, i);
    const pool = POOL[net];
    if (kind === 'proposal') return [{ block: i, k: 0, type: 'RewardValidatorTx', addrs: [r.int(pool)] }];
    const n = r.chance(0.6) ? 1 : r.chance(0.75) ? 2 : 3;
    const out: Header[] = [];
    for (let k = 0; k < n; k++) {
      let w = r.int(TYPE_TOTAL);
      let type: PTxType = TYPE_WEIGHTS[0]![0];
      for (const [t, tw] of TYPE_WEIGHTS) {
        if (w < tw) {
          type = t;
          break;
        }
        w -= tw;
      }
      const a = r.int(pool);
      const addrs = r.chance(0.5) ? [a, (a + 1 + r.int(pool - 1)) % pool] : [a];
      out.push(L1_TYPES.has(type) ? { block: i, k, type, addrs, l1: r.int(L1_VALIDATIONS) } : { block: i, k, type, addrs });
    }
    return out;
  }

  /** Headers of blocks 0..head, made once. */
  private headersUpTo(net: StakingNetwork, head: number): Header[] {
    let list = this.headers.get(net);
    if (!list) this.headers.set(net, (list = []));
    for (let i = (this.madeUpTo.get(net) ?? -1) + 1; i <= head; i++) list.push(...this.blockHeaders(net, i));
    this.madeUpTo.set(net, Math.max(this.madeUpTo.get(net) ?? -1, head));
    return list;
  }

  /** The transactions a query lists at time t, as positions into the headers, oldest first. */
  private matching(net: StakingNetwork, q: PrimaryTxQuery, t: number): number[] {
    const head = this.headAt(net, t);
    const headers = this.headersUpTo(net, head);
    const want = q.addresses && new Set(q.addresses.map(addressBody));
    const l1 = q.l1ValidationId;
    const types = q.txTypes && new Set(q.txTypes);
    // No type filter and a filter of no type (listStaking's of a type that never stakes) differ.
    const key = JSON.stringify([net, [...(want ?? [])].sort(), l1 ?? null, types ? [...types].sort() : null, q.startTimestamp ?? null, q.endTimestamp ?? null, head]);
    let hit = this.cache.get(key);
    if (hit) return hit;
    const lo = q.startTimestamp === undefined ? 0 : this.firstAtOrAfter(net, q.startTimestamp);
    const hi = q.endTimestamp === undefined ? head : Math.min(head, this.headAt(net, q.endTimestamp));
    const poolWanted = want && new Set(Array.from({ length: POOL[net] }, (_, a) => a).filter((a) => want.has(poolAddress(net, a))));
    const l1Wanted = l1 === undefined ? undefined : Array.from({ length: L1_VALIDATIONS }, (_, v) => v).find((v) => l1ValidationId(net, v) === l1) ?? -1;
    hit = [];
    const first = lowerBound(0, headers.length, (x) => headers[x]!.block >= lo);
    for (let x = first; x < headers.length && headers[x]!.block <= hi; x++) {
      const h = headers[x]!;
      if (poolWanted && !h.addrs.some((a) => poolWanted.has(a))) continue;
      if (l1Wanted !== undefined && h.l1 !== l1Wanted) continue;
      if (types && !types.has(h.type)) continue;
      hit.push(x);
    }
    if (this.cache.size > 256) this.cache.clear();
    this.cache.set(key, hit);
    return hit;
  }

  /** The transactions a query lists at time t, in serving order (newest first unless asc). */
  listTransactions(network: Network, q: PrimaryTxQuery, t = WORLD_NOW): { length: number; at(k: number): PChainTransaction } {
    const net = stakingNetwork(network);
    const hits = this.matching(net, q, t);
    const headers = this.headers.get(net)!;
    const asc = q.sortOrder === 'asc';
    return { length: hits.length, at: (k) => this.transaction(net, headers[hits[asc ? k : hits.length - 1 - k]!]!) };
  }

  /**
   * The staking transactions of a query's addresses (of the network, without any) whose stake is
   * still locked at time t (end after t), in serving order: the same transactions, whole, as
   * listTransactions gives.
   */
  listStaking(network: Network, q: PrimaryTxQuery, t = WORLD_NOW): { length: number; at(k: number): PChainTransaction } {
    const net = stakingNetwork(network);
    const txTypes = STAKING_TX_TYPES.filter((x) => !q.txTypes || q.txTypes.includes(x));
    const hits = this.matching(net, { ...q, txTypes }, t);
    const headers = this.headers.get(net)!;
    const key = JSON.stringify(['staking', net, [...(q.addresses ?? [])].map(addressBody).sort(), txTypes, q.startTimestamp ?? null, q.endTimestamp ?? null, t]);
    let active = this.cache.get(key);
    if (!active) {
      active = hits.filter((x) => (this.transaction(net, headers[x]!).endTimestamp ?? 0) > t);
      if (this.cache.size > 256) this.cache.clear();
      this.cache.set(key, active);
    }
    const list = active;
    const asc = q.sortOrder === 'asc';
    return { length: list.length, at: (k) => this.transaction(net, headers[list[asc ? k : list.length - 1 - k]!]!) };
  }

  /** Indices of the blocks in [start, end] (inclusive, Unix seconds) up to time t. */
  private blockSpan(net: StakingNetwork, range: TimeRange, t: number): [number, number] {
    const lo = range.startTimestamp === undefined ? 0 : this.firstAtOrAfter(net, range.startTimestamp);
    const hi = Math.min(this.headAt(net, t), range.endTimestamp === undefined ? Infinity : this.headAt(net, range.endTimestamp));
    return [lo, hi];
  }

  /** Blocks in [start, end] (inclusive, Unix seconds) up to time t, newest first. */
  listBlocks(network: Network, range: TimeRange, t = WORLD_NOW): { length: number; at(k: number): PrimaryNetworkBlock } {
    const net = stakingNetwork(network);
    const [lo, hi] = this.blockSpan(net, range, t);
    const length = Math.max(0, hi - lo + 1);
    return { length, at: (k) => this.block(net, hi - k) };
  }

  /** The blocks of listBlocks that a node proposed, newest first; none for a node that proposes none. */
  listBlocksByNode(network: Network, nodeId: string, range: TimeRange, t = WORLD_NOW): { length: number; at(k: number): PrimaryNetworkBlock } {
    const net = stakingNetwork(network);
    const v = Array.from({ length: NODES }, (_, n) => n).find((n) => nodeIdOf(net, n) === nodeId);
    if (v === undefined) return { length: 0, at: () => { throw new RangeError('no block'); } };
    const [lo, hi] = this.blockSpan(net, range, t);
    const mine = this.proposedUpTo(net, hi).byNode[v]!;
    const a = lowerBound(0, mine.length, (x) => mine[x]! >= lo);
    const b = lowerBound(a, mine.length, (x) => mine[x]! > hi);
    return { length: b - a, at: (k) => this.block(net, mine[b - 1 - k]!) };
  }

  /** Which node proposed block i (an index below NODES); commit blocks are not proposed. */
  private proposerOf(net: StakingNetwork, i: number): number | undefined {
    return this.kind(net, i) === 'commit' ? undefined : hashKey(this.seed, 'pproposernode', net, i) % NODES;
  }

  private proposedUpTo(net: StakingNetwork, head: number): { upTo: number; byNode: number[][] } {
    let p = this.proposed.get(net);
    if (!p) this.proposed.set(net, (p = { upTo: -1, byNode: Array.from({ length: NODES }, () => []) }));
    for (let i = p.upTo + 1; i <= head; i++) {
      const v = this.proposerOf(net, i);
      if (v !== undefined) p.byNode[v]!.push(i);
    }
    p.upTo = Math.max(p.upTo, head);
    return p;
  }

  blockHash(net: StakingNetwork, i: number): string {
    return id32(Rng.of(this.seed, 'pblockhash', net, i));
  }

  /**
   * The chain an ImportTx or ExportTx trades with, drawn apart from its body, so that the X- and
   * C-Chain listings (primary_xc.ts) find their side of it from the headers alone.
   */
  peerOf(net: StakingNetwork, h: Header): 'x' | 'c' {
    return hashKey(this.seed, 'ppeer', net, h.block, h.k) % 2 === 0 ? 'x' : 'c';
  }

  /**
   * The other chain's side of a P-Chain ImportTx (the ExportTx that made what it imports, just
   * before its block) or ExportTx (the ImportTx that takes what it exports, just after): its id,
   * time and block height. The X-Chain's blocks are three a P-Chain block (its exports, its own
   * transactions, its imports), a second either side of it; the C-Chain's are the EVM world's blocks.
   */
  peerTx(net: StakingNetwork, h: Header): { txHash: string; timestamp: number; blockHeight: number; blockHash: string } {
    const imports = h.type === 'ExportTx';
    const txHash = id32(Rng.of(this.seed, 'ppeertx', net, h.block, h.k));
    const ts = this.blockTime(net, h.block);
    if (this.peerOf(net, h) === 'x') {
      const blockHeight = xBlockHeight(net, h.block, imports ? 2 : 0);
      return { txHash, timestamp: ts + (imports ? 1 : -1), blockHeight, blockHash: xBlockHash(this.seed, net, blockHeight) };
    }
    const c = C_EVM_CHAIN[net];
    // The first C-Chain block after the P-Chain block, or the last before it (blocks every c.blockTimeSeconds).
    const blockHeight = imports ? c.latestBlock + Math.floor((ts - WORLD_NOW) / c.blockTimeSeconds) + 1 : c.latestBlock + Math.ceil((ts - WORLD_NOW) / c.blockTimeSeconds) - 1;
    return { txHash, timestamp: WORLD_NOW - (c.latestBlock - blockHeight) * c.blockTimeSeconds, blockHeight, blockHash: cBlockHash(this.seed, net, blockHeight) };
  }

  private txHash(net: StakingNetwork, i: number, k: number): string {
    return id32(Rng.of(this.seed, 'ptx', net, i, k));
  }

  block(net: StakingNetwork, i: number): PrimaryNetworkBlock {
    const r = Rng.of(this.seed, 'pblockbody', net, i);
    const kind = this.kind(net, i);
    const txs = this.blockHeaders(net, i).map((h) => this.txHash(net, i, h.k));
    const ts = this.blockTime(net, i);
    const height = BASE_HEIGHT[net] + i;
    const active = 40 + (i >> 11) % 30;
    const b: PrimaryNetworkBlock = {
      blockNumber: String(height),
      blockHash: this.blockHash(net, i),
      parentHash: i === 0 ? id32(Rng.of(this.seed, 'pblockhash', net, -1)) : this.blockHash(net, i - 1),
      blockTimestamp: ts,
      blockType: kind === 'proposal' ? 'BanffProposalBlock' : kind === 'commit' ? 'BanffCommitBlock' : 'BanffStandardBlock',
      txCount: txs.length,
      transactions: txs,
      blockSizeBytes: kind === 'commit' ? 47 : 250 + txs.length * r.range(300, 2400),
      l1ValidatorsAccruedFees: 1_250_000_000_000 + i * 5_120 * active,
      activeL1Validators: active,
      // Rewards mint: the supply grows with each proposal committed before this block.
      currentSupply: (BASE_SUPPLY + BigInt(i) * 3_170_000_000n).toString(),
    };
    // Commit and abort blocks are not built by the proposer VM: they carry no proposer.
    if (kind !== 'commit') {
      b.proposerDetails = {
        proposerId: id32(Rng.of(this.seed, 'pproposer', net, i)),
        proposerParentId: id32(Rng.of(this.seed, 'pproposer', net, i - 1)),
        proposerNodeId: nodeIdOf(net, this.proposerOf(net, i)!),
        proposerPChainHeight: height - 1 - r.int(3),
        proposerTimestamp: ts,
      };
    }
    return b;
  }

  /** An L1 validation's state as a transaction reports it. */
  private l1Detail(net: StakingNetwork, v: number, r: Rng, balanceChange?: bigint): L1ValidatorDetail {
    const id = labelBytes(`l1validation:${net}:${v}`, 32);
    const d: L1ValidatorDetail = {
      validationId: cb58Encode(id),
      validationIdHex: '0x' + toHex(id),
      nodeId: encodeNodeId(labelBytes(`l1node:${net}:${v}`, 20)),
      subnetId: l1SubnetId(net, v % L1_SUBNETS),
      weight: v === 0 ? new ExactNumber('9007199254740993') : 20 + r.int(1_000_000),
      remainingBalance: r.range(1, 50_000) * 1_000_000_000 + r.int(1_000_000_000),
    };
    if (balanceChange !== undefined) d.balanceChange = Number(balanceChange);
    return d;
  }

  /**
   * The body of the transaction a header names: UTXOs, amounts and the fields of its type. Kept:
   * the balances and UTXOs of an address derive its whole history again at every time asked,
   * and the X- and C-Chain listings the P-Chain side of each atomic transaction. Readers copy
   * what they change (the routes serve it as it is).
   */
  transaction(net: StakingNetwork, h: Header): PChainTransaction {
    return memoized(this.bodies, TRANSACTIONS_KEPT, `${net}:${h.block}:${h.k}:${h.type}`, () => this.body(net, h));
  }

  private body(net: StakingNetwork, h: Header): PChainTransaction {
    const i = h.block;
    const r = Rng.of(this.seed, 'ptxbody', net, i, h.k);
    const txHash = this.txHash(net, i, h.k);
    const blockNumber = String(BASE_HEIGHT[net] + i);
    const ts = this.blockTime(net, i);
    const owner = poolAddress(net, h.addrs[0]!);
    const other = poolAddress(net, h.addrs[1] ?? h.addrs[0]!);
    const P = P_CHAIN_ID;
    let outIndex = 0;
    const emitted: PChainUtxo[] = [];
    const consumed: PChainUtxo[] = [];
    const emit = (address: string, amount: bigint, extra: Partial<PChainUtxo> = {}, to = P): void => {
      const n = outIndex++;
      emitted.push({
        addresses: [address], asset: avax(net, amount), consumedOnChainId: to, createdOnChainId: P,
        utxoId: id32(Rng.of(this.seed, 'putxo', txHash, n)), amount: amount.toString(), assetId: AVAX_ASSET_ID[net],
        blockNumber, blockTimestamp: ts, outputIndex: n, txHash, utxoType: 'TRANSFER', threshold: 1, platformLocktime: 0, staked: false,
        ...extra,
      });
    };
    /** UTXOs of `address` made earlier on the P-Chain that together hold `total`. */
    const consume = (address: string, total: bigint): void => {
      const n = total > 10n * NANO && r.chance(0.4) ? 2 + r.int(2) : 1;
      let left = total;
      for (let u = 0; u < n; u++) {
        const amount = u === n - 1 ? left : left / BigInt(n - u) + r.bigBelow(NANO);
        left -= amount;
        const age = r.range(600, 90 * DAY);
        const made = Rng.of(this.seed, 'pprev', net, i, h.k, u);
        consumed.push({
          addresses: [address], asset: avax(net, amount), consumedOnChainId: P, createdOnChainId: P,
          utxoId: id32(made), amount: amount.toString(), assetId: AVAX_ASSET_ID[net],
          blockNumber: String(Math.max(1, BASE_HEIGHT[net] + i - Math.floor(age / P_BLOCK_SECONDS))), blockTimestamp: ts - age,
          outputIndex: made.int(4), txHash: id32(made), utxoType: 'TRANSFER', threshold: 1, platformLocktime: 0, staked: false,
          consumingTxHash: txHash, consumingBlockNumber: blockNumber, consumingBlockTimestamp: ts,
        });
      }
    };
    const fee = BigInt(r.range(20_000, 2_000_000));
    const amountOf = (lo: number, hi: number) => BigInt(r.range(lo, hi)) * NANO + r.bigBelow(NANO);
    const tx: PChainTransaction = {
      txHash, txType: h.type, blockTimestamp: ts, blockNumber, blockHash: this.blockHash(net, i),
      consumedUtxos: consumed, emittedUtxos: emitted, value: [], amountBurned: [], amountStaked: [], amountL1ValidatorBalanceBurned: [],
    };
    let burned = fee;
    let l1Burned = 0n;
    /** Pays `spend` plus the fee from the owner's UTXOs, with change back to the owner. */
    const pay = (spend: bigint): void => {
      const change = r.chance(0.8) ? amountOf(0, 500) : 0n;
      consume(owner, spend + fee + change);
      if (change > 0n) emit(owner, change);
    };
    switch (h.type) {
      case 'BaseTx': {
        const amount = amountOf(1, 20_000);
        emit(other, amount);
        pay(amount);
        if (r.chance(0.3)) tx.memo = '0x' + r.hex(8);
        break;
      }
      case 'ImportTx': {
        const source = this.peerOf(net, h) === 'x' ? X_CHAIN[net] : C_CHAIN[net];
        const amount = amountOf(1, 50_000);
        // What it imports: the outputs of the source chain's ExportTx just before (primary_xc.ts lists it).
        const peer = this.peerTx(net, h);
        const n = r.chance(0.3) ? 2 : 1;
        let left = amount + fee;
        for (let u = 0; u < n; u++) {
          const part = u === n - 1 ? left : left / 2n + r.bigBelow(NANO);
          left -= part;
          consumed.push({
            addresses: [owner], asset: avax(net, part), consumedOnChainId: P, createdOnChainId: source,
            utxoId: id32(Rng.of(this.seed, 'ppeerutxo', peer.txHash, u)), amount: part.toString(), assetId: AVAX_ASSET_ID[net],
            blockNumber: String(peer.blockHeight), blockTimestamp: peer.timestamp, outputIndex: u, txHash: peer.txHash,
            utxoType: 'TRANSFER', threshold: 1, platformLocktime: 0, staked: false,
            consumingTxHash: txHash, consumingBlockNumber: blockNumber, consumingBlockTimestamp: ts,
          });
        }
        emit(owner, amount);
        tx.sourceChain = source;
        break;
      }
      case 'ExportTx': {
        const dest = this.peerOf(net, h) === 'x' ? X_CHAIN[net] : C_CHAIN[net];
        const amount = amountOf(1, 50_000);
        emit(other, amount, {}, dest);
        pay(amount);
        tx.destinationChain = dest;
        break;
      }
      case 'AddPermissionlessValidatorTx':
      case 'AddPermissionlessDelegatorTx': {
        const validator = h.type === 'AddPermissionlessValidatorTx';
        const stake = validator ? amountOf(2_000, 1_000_000) : amountOf(25, 500_000);
        const end = ts + r.range(14 * DAY, 365 * DAY);
        emit(owner, stake, { utxoType: 'STAKE', staked: true, utxoStartTimestamp: ts, utxoEndTimestamp: end });
        // A few stakes come from UTXOs locked for staking only until some time ahead.
        if (r.chance(0.1)) emitted[emitted.length - 1]!.stakeableLocktime = end + r.range(DAY, 400 * DAY);
        pay(stake);
        tx.amountStaked = [avax(net, stake)];
        tx.nodeId = validator ? encodeNodeId(labelBytes(`pvalidator:${net}:${h.block}:${h.k}`, 20)) : nodeIdOf(net, r.int(NODES));
        tx.subnetId = PRIMARY_SUBNET_ID;
        tx.startTimestamp = ts;
        tx.endTimestamp = end;
        tx.estimatedReward = ((stake * BigInt(r.range(650, 800)) * BigInt(end - ts)) / (10_000n * 365n * BigInt(DAY))).toString();
        tx.rewardAddresses = [other];
        if (validator) {
          tx.delegationFeePercent = String(r.range(2, 20) + r.pick(['', '.5', '.25']));
          tx.blsCredentials = { publicKey: '0x' + r.hex(48), proofOfPossession: '0x' + r.hex(96) };
        }
        break;
      }
      case 'RewardValidatorTx': {
        // The stake comes back and the reward is minted: nothing is consumed and nothing burned.
        burned = 0n;
        const stake = amountOf(25, 1_000_000);
        const staking = id32(Rng.of(this.seed, 'pstaking', net, i));
        const started = ts - r.range(14 * DAY, 365 * DAY);
        emit(owner, stake, { txHash: staking, utxoStartTimestamp: started, utxoEndTimestamp: ts });
        const delegation = r.chance(0.7);
        const reward = (stake * BigInt(r.range(650, 800)) * BigInt(ts - started)) / (10_000n * 365n * BigInt(DAY));
        const fee_ = delegation ? (reward * BigInt(r.range(200, 1_000))) / 10_000n : 0n;
        emit(owner, reward - fee_, { rewardType: delegation ? 'DELEGATOR' : 'VALIDATOR' });
        if (delegation) emit(poolAddress(net, (h.addrs[0]! + 1) % POOL[net]), fee_, { rewardType: 'VALIDATOR_FEE' });
        tx.stakingTxHash = staking;
        break;
      }
      case 'IncreaseL1ValidatorBalanceTx':
      case 'RegisterL1ValidatorTx': {
        const balance = amountOf(1, 500);
        l1Burned = balance;
        pay(balance);
        const d = this.l1Detail(net, h.l1!, r, balance);
        if (h.type === 'RegisterL1ValidatorTx') d.blsCredentials = { publicKey: '0x' + r.hex(48), proofOfPossession: '0x' + r.hex(96) };
        tx.l1ValidatorDetails = [d];
        break;
      }
      case 'SetL1ValidatorWeightTx': {
        pay(0n);
        tx.l1ValidatorDetails = [this.l1Detail(net, h.l1!, r)];
        break;
      }
      case 'DisableL1ValidatorTx': {
        // The remaining balance goes back to the validator's owner: emitted beyond what is consumed.
        const refund = amountOf(0, 200);
        pay(0n);
        emit(other, refund);
        tx.l1ValidatorDetails = [{ ...this.l1Detail(net, h.l1!, r, -refund), weight: 0, remainingBalance: 0 }];
        break;
      }
      case 'ConvertSubnetToL1Tx': {
        const s = h.l1! % L1_SUBNETS;
        const vs = Array.from({ length: L1_VALIDATIONS }, (_, v) => v).filter((v) => v % L1_SUBNETS === s).slice(0, 2);
        const balances = vs.map(() => amountOf(1, 100));
        l1Burned = sum(balances);
        pay(l1Burned);
        tx.subnetId = l1SubnetId(net, s);
        tx.l1ValidatorManagerDetails = { blockchainId: cb58Encode(labelBytes(`l1chain:${net}:${s}`, 32)), contractAddress: '0x' + toHex(labelBytes(`l1vm:${net}:${s}`, 20)) };
        tx.l1ValidatorDetails = vs.map((v, n) => this.l1Detail(net, v, r, balances[n]));
        break;
      }
      case 'CreateSubnetTx':
      case 'TransferSubnetOwnershipTx': {
        pay(0n);
        tx.subnetId = h.type === 'CreateSubnetTx' ? txHash : subnetIdOf(net, r.int(SUBNETS));
        tx.subnetOwnershipInfo = { locktime: 0, threshold: h.addrs.length, addresses: h.addrs.map((a) => poolAddress(net, a)) };
        break;
      }
      case 'CreateChainTx': {
        pay(0n);
        const chainId = 100_000 + r.int(900_000);
        tx.subnetId = subnetIdOf(net, r.int(SUBNETS));
        tx.blockchainInfo = {
          chainName: `chain${chainId}`,
          vmId: 'srEXiWaHuhNyGwPUi444Tu47ZEDwxTWrbQiuD7FmgSAQ6X7Dy',
          genesisData: { config: { chainId, feeConfig: { gasLimit: 15_000_000, minBaseFee: 25_000_000_000, targetGas: 20_000_000 } }, gasLimit: '0xe4e1c0', alloc: {} },
        };
        break;
      }
      case 'AddSubnetValidatorTx':
      case 'RemoveSubnetValidatorTx': {
        pay(0n);
        tx.nodeId = nodeIdOf(net, r.int(NODES));
        tx.subnetId = subnetIdOf(net, r.int(SUBNETS));
        if (h.type === 'AddSubnetValidatorTx') {
          tx.startTimestamp = ts;
          tx.endTimestamp = ts + r.range(DAY, 365 * DAY);
        }
        break;
      }
      default:
        throw new Error(`no body for ${h.type}`);
    }
    tx.value = emitted.length ? [avax(net, sum(emitted.map((u) => BigInt(u.amount))))] : [];
    if (burned > 0n || h.type !== 'RewardValidatorTx') tx.amountBurned = [avax(net, burned)];
    if (l1Burned > 0n) tx.amountL1ValidatorBalanceBurned = [avax(net, l1Burned)];
    return tx;
  }
}

const worlds = new Map<number, PrimaryWorld>();

/** The platform chain of a seed (its caches are shared by every view of the world). */
export function primaryWorld(seed: number): PrimaryWorld {
  let w = worlds.get(seed);
  if (!w) worlds.set(seed, (w = new PrimaryWorld(seed)));
  return w;
}

/** Ids of the world a pipeline can name: they do not depend on the seed. */
export const PRIMARY_DEMO = {
  addresses: [poolAddress('mainnet', 0), poolAddress('mainnet', 1)].map((a) => 'P-' + a),
  l1ValidationIds: [l1ValidationId('mainnet', 0), l1ValidationId('mainnet', 1)],
} as const;
