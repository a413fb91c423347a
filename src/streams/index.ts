// The registry: adding a stream is adding its declaration here.
import type { StreamDecl } from './types.js';
import { ercTransfers } from './erc_transfers.js';
import { internalTransactions } from './internal_transactions.js';
import { historicalRewards } from './historical_rewards.js';
import { pendingRewards } from './pending_rewards.js';
import { delegators } from './delegators.js';
import { chainMetrics } from './chain_metrics.js';
import { avgTps } from './avg_tps.js';

export const STREAMS: readonly StreamDecl[] = [
  ercTransfers,
  internalTransactions,
  historicalRewards,
  pendingRewards,
  delegators,
  chainMetrics,
  avgTps,
];

export const STREAM_BY_TABLE: ReadonlyMap<string, StreamDecl> = new Map(STREAMS.map((s) => [s.table, s]));
