// The registry: adding a stream is adding its declaration here.
import type { StreamDecl } from './types.js';
import { ercTransfers } from './erc_transfers.js';
import { internalTransactions } from './internal_transactions.js';
import { historicalRewards } from './historical_rewards.js';
import { pendingRewards } from './pending_rewards.js';
import { delegators } from './delegators.js';
import { chainMetrics } from './chain_metrics.js';
import { avgTps } from './avg_tps.js';
import { blocks } from './blocks.js';
import { blockTransactions } from './block_transactions.js';
import { nativeBalances } from './native_balances.js';
import { erc20Balances } from './erc20_balances.js';
import { subnets } from './subnets.js';
import { blockchains } from './blockchains.js';
import { contracts } from './contracts.js';
import { addressChains } from './address_chains.js';
import { chains } from './chains.js';

export const STREAMS: readonly StreamDecl[] = [
  ercTransfers,
  internalTransactions,
  historicalRewards,
  pendingRewards,
  delegators,
  chainMetrics,
  avgTps,
  blocks,
  blockTransactions,
  nativeBalances,
  erc20Balances,
  subnets,
  blockchains,
  contracts,
  addressChains,
  chains,
];

export const STREAM_BY_TABLE: ReadonlyMap<string, StreamDecl> = new Map(STREAMS.map((s) => [s.table, s]));
