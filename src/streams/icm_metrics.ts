import type { StreamDecl } from '../decl/stream.js';
import { timeRangeCheck } from './common.js';
import { isBlockchainId } from '../ids.js';
import { CHUNKS_OPTION } from './chain_reads.js';
import { TIME_INTERVALS } from './chain_metrics.js';

const DAY = 86_400;
const INTERVAL_SECONDS: Record<(typeof TIME_INTERVALS)[number], number> = { hour: 3600, day: DAY, week: 7 * DAY, month: 31 * DAY };
export const ICM_GROUP_BY = ['srcBlockchainId', 'destBlockchainId', 'srcBlockchainId,destBlockchainId'] as const;

export const icmMetrics: StreamDecl = {
  table: 'icm_metrics',
  doc: 'ICM message counts per interval from the metrics service, per network, source and destination chain as grouped',
  service: 'metrics',
  endpoint: '/v2/icm/timeseries',
  items: 'results',
  weight: 100,
  pageSize: { min: 1, max: 2160, default: 2160 },
  options: {
    network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
    srcBlockchainId: { kind: 'string', doc: 'only messages from this chain (cb58 blockchain id)' },
    destBlockchainId: { kind: 'string', doc: 'only messages to this chain (cb58 blockchain id)' },
    groupBy: { kind: 'enum', values: ICM_GROUP_BY, doc: 'a point per source, per destination, or per route (default: one per interval)' },
    timeInterval: { kind: 'enum', values: TIME_INTERVALS, doc: 'hour, day (default), week or month' },
    startTimestamp: { kind: 'unix_seconds', doc: 'points at or after it (inclusive)' },
    endTimestamp: { kind: 'unix_seconds', doc: 'points before it (exclusive): a point at or after it is never committed' },
    ...CHUNKS_OPTION,
  },
  check: (s) => {
    const out: Array<[string, string]> = [];
    for (const k of ['srcBlockchainId', 'destBlockchainId'] as const)
      if (s[k] !== undefined && !isBlockchainId(s[k])) out.push([k, `${JSON.stringify(s[k])} is not a blockchain id (cb58 of 32 bytes)`]);
    out.push(...timeRangeCheck(s));
    return out;
  },
  partitions: (s) => {
    const network = String(s.network);
    const interval = (s.timeInterval as string | undefined) ?? 'day';
    const groupBy = (s.groupBy as string | undefined) ?? '';
    const query: Record<string, string> = { network, timeInterval: interval };
    for (const k of ['srcBlockchainId', 'destBlockchainId', 'groupBy', 'startTimestamp', 'endTimestamp'] as const) if (s[k] !== undefined) query[k] = String(s[k]);
    const id = [network, interval, ...['srcBlockchainId', 'destBlockchainId', 'groupBy'].filter((k) => query[k] !== undefined).map((k) => `${k}=${query[k]}`)].join('/');
    return [{ id, path: {}, query, values: { network, timeInterval: interval, groupBy } }];
  },
  refresh: 'merge',
  mergeScope: 'partition',
  timeCursor: { column: 'timestamp', start: 'startTimestamp', startOption: 'startTimestamp', end: 'endTimestamp', endOption: 'endTimestamp', step: (q) => INTERVAL_SECONDS[q.timeInterval as (typeof TIME_INTERVALS)[number]] ?? DAY },
  key: ['network', 'group_by', 'time_interval', 'src_blockchain_id', 'dest_blockchain_id', 'timestamp'],
  columns: [
    { name: 'network', type: 'varchar', partition: 'network', doc: 'mainnet, fuji or testnet' },
    { name: 'group_by', type: 'varchar', partition: 'groupBy', doc: "the entry's groupBy ('' for none)" },
    { name: 'time_interval', type: 'varchar', partition: 'timeInterval', doc: 'hour, day, week or month' },
    { name: 'src_blockchain_id', type: 'varchar', from: 'srcBlockchainId', required: true, doc: 'source chain of the point, as the service names it (a blockchain id where filtered or grouped by source)' },
    { name: 'dest_blockchain_id', type: 'varchar', from: 'destBlockchainId', required: true, doc: 'destination chain of the point, as the service names it (a blockchain id where filtered or grouped by destination)' },
    { name: 'timestamp', type: 'timestamptz', from: 'timestamp', required: true, doc: 'start of the interval (UTC)' },
    { name: 'value', type: 'double', from: 'value', required: true, doc: 'messages in the interval' },
  ],
};
