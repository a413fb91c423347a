// The simulated world: one object answering "what would the services serve for this query",
// in serving order. Routes page through its listings; tests compare served pages with it.
import { encodePrimaryAddress, type Network } from '../config/ids.js';
import {
  CHAINS, EvmWorld, WORLD_NOW, contractAddress, internalOwnerAddress,
  type BlockRange, type ChainInfo, type ContractInfo, type InternalTransaction, type Transfer,
} from './evm.js';
import { labelBytes } from './hash.js';
import { iterate, type Listing } from './listing.js';
import {
  METRIC_CHAIN_IDS, SeriesWorld, type Metric, type MetricPoint, type MetricQuery,
} from './series.js';
import {
  StakingWorld, nodeIdOf, stakingNetwork,
  type Delegator, type DelegatorQuery, type HistoricalReward, type PendingReward, type RewardQuery, type ValidatorInfo,
} from './staking.js';

export interface WorldOptions {
  seed?: number;
  /** Multiplies the number of transfers and internal transactions per listing (default 1). */
  scale?: number;
}

export class World {
  readonly seed: number;
  readonly scale: number;
  /** Fixed virtual "now" of the world, Unix seconds (2025-11-01T00:00:00Z). */
  readonly now = WORLD_NOW;
  readonly chains: readonly ChainInfo[] = CHAINS;
  readonly metricChainIds: readonly string[] = METRIC_CHAIN_IDS;
  readonly evm: EvmWorld;
  readonly staking: StakingWorld;
  readonly series: SeriesWorld;

  constructor(opts: WorldOptions = {}) {
    this.seed = (opts.seed ?? 1) >>> 0;
    this.scale = opts.scale ?? 1;
    if (!(this.scale > 0) || this.scale > 100_000) throw new RangeError('scale must be in (0, 100000]');
    this.evm = new EvmWorld(this.seed, this.scale);
    this.staking = new StakingWorld(this.seed);
    this.series = new SeriesWorld(this.seed);
  }

  /** By EVM chain id or blockchain id. */
  chain(id: string): ChainInfo | undefined {
    return this.evm.chain(id);
  }
  contractsOf(chainId: string): readonly ContractInfo[] {
    return this.evm.contractsOf(chainId);
  }
  contract(chainId: string, address: string): ContractInfo | undefined {
    return this.evm.contract(chainId, address);
  }
  /** Addresses that have internal transactions (any other address has none). */
  internalAddressesOf(chainId: string): readonly string[] {
    return this.evm.internalOwnersOf(chainId);
  }

  transferCountFor(chainId: string, contract: string): number {
    return this.evm.transferCount(chainId, contract);
  }
  /** i-th transfer, oldest first (index 0 is the oldest). */
  transferAt(chainId: string, contract: string, i: number): Transfer {
    return this.evm.transferAt(chainId, contract, i);
  }
  /** What the service serves, in order (newest first). */
  listTransfers(chainId: string, contract: string, range: BlockRange = {}): Listing<Transfer> {
    return this.evm.listTransfers(chainId, contract, range);
  }
  transfers(chainId: string, contract: string, range: BlockRange = {}): IterableIterator<Transfer> {
    return iterate(this.listTransfers(chainId, contract, range));
  }

  internalCountFor(chainId: string, address: string): number {
    return this.evm.internalCount(chainId, address);
  }
  internalAt(chainId: string, address: string, i: number): InternalTransaction {
    return this.evm.internalAt(chainId, address, i);
  }
  listInternals(chainId: string, address: string, range: BlockRange = {}): Listing<InternalTransaction> {
    return this.evm.listInternals(chainId, address, range);
  }
  internals(chainId: string, address: string, range: BlockRange = {}): IterableIterator<InternalTransaction> {
    return iterate(this.listInternals(chainId, address, range));
  }

  validators(network: Network): readonly ValidatorInfo[] {
    return this.staking.validators(stakingNetwork(network));
  }
  listRewards(network: Network, q: RewardQuery): Listing<HistoricalReward> {
    return this.staking.listRewards(network, q);
  }
  rewards(network: Network, q: RewardQuery): IterableIterator<HistoricalReward> {
    return iterate(this.listRewards(network, q));
  }
  listPendingRewards(network: Network, q: RewardQuery): Listing<PendingReward> {
    return this.staking.listPendingRewards(network, q);
  }
  pendingRewards(network: Network, q: RewardQuery): IterableIterator<PendingReward> {
    return iterate(this.listPendingRewards(network, q));
  }
  listDelegators(network: Network, q: DelegatorQuery = {}): Listing<Delegator> {
    return this.staking.listDelegators(network, q);
  }
  delegators(network: Network, q: DelegatorQuery = {}): IterableIterator<Delegator> {
    return iterate(this.listDelegators(network, q));
  }

  listMetric(chainId: string, metric: Metric, q: MetricQuery = {}): Listing<MetricPoint> {
    return this.series.listMetric(chainId, metric, q);
  }
  metricPoints(chainId: string, metric: Metric, q: MetricQuery = {}): IterableIterator<MetricPoint> {
    return iterate(this.listMetric(chainId, metric, q));
  }
  listAvgTps(chainId: string): Listing<MetricPoint> {
    return this.series.listAvgTps(chainId);
  }
  avgTpsPoints(chainId: string): IterableIterator<MetricPoint> {
    return iterate(this.listAvgTps(chainId));
  }
  avgTpsLastRun(): number {
    return this.series.avgTpsLastRun();
  }
}

export function buildWorld(opts: WorldOptions = {}): World {
  return new World(opts);
}

/**
 * Real ids of the world for the demo pipeline. Identities do not depend on the seed, so these
 * are valid for every seed; only the data behind them changes.
 */
export const DEMO = {
  /** the world's virtual now, Unix seconds */
  now: WORLD_NOW,
  chainId: '43114',
  fujiChainId: '43113',
  subnetChainId: '432204',
  contracts: {
    erc20: contractAddress('43114', 0),
    erc721: contractAddress('43114', 3),
    erc1155: contractAddress('43114', 5),
  },
  internalAddresses: [internalOwnerAddress('43114', 0), internalOwnerAddress('43114', 1)],
  network: 'mainnet',
  nodeIds: [nodeIdOf('mainnet', 0), nodeIdOf('mainnet', 1)],
  /** owners of validators 0 and 1; each also delegates to another node */
  rewardAddresses: [
    encodePrimaryAddress('mainnet', labelBytes('paddr:mainnet:0', 20), 'P'),
    encodePrimaryAddress('mainnet', labelBytes('paddr:mainnet:1', 20), 'P'),
  ],
  metricChainIds: ['43114', 'total'],
  metrics: ['txCount', 'activeAddresses', 'gasUsed', 'avgTps', 'cumulativeTxCount', 'feesPaid'],
  /** first day of the 43114 metric series */
  metricsFrom: Date.UTC(2023, 10, 1) / 1000,
} as const;
