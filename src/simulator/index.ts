// Public surface of the offline simulator of the data and metrics services.
export { startSimulator, type Simulator, type SimulatorOptions, type SimulatorStats } from './server.js';
export { API_KEY_HEADERS } from '../requests.js';
export { buildWorld, DEMO, World, type WorldOptions } from './world.js';
export { FAULT_KINDS, type FaultKind, type FaultOptions } from './faults.js';
export { WEIGHTS, type Budget } from './ratelimit.js';
export { METRIC_TOKEN_TTL_MS } from './tokens.js';
export { AVG_TPS_PAGE_SIZE, METRICS, TIME_INTERVALS, UPDATE_SECONDS, dayOnly, type Metric, type MetricPoint, type TimeInterval } from './series.js';
export { UINT256_MAX_STRING } from './amounts.js';
export { INTERNAL_TX_TYPES, INTERNALS_PER_DAY, TRANSFERS_PER_DAY, WORLD_NOW, type InternalTransaction, type Transfer, type RichAddress } from './evm.js';
export type { Listing } from './listing.js';
export type { Delegator, HistoricalReward, PendingReward } from './staking.js';
