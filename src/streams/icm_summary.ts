import type { StreamDecl } from '../decl/stream.js';
import { icmMetrics } from './icm_metrics.js';
import { resultSnapshot, SNAPSHOT_COLUMN, WINDOW_COLUMNS } from './chain_rolling_metrics.js';

export const icmSummary: StreamDecl = {
  table: 'icm_summary',
  doc: 'ICM message counts over rolling windows (last hour to all time) from the metrics service, per network and route: one snapshot per run',
  service: 'metrics',
  endpoint: '/v2/icm/summary',
  items: 'result',
  extract: resultSnapshot,
  weight: 100,
  pageSize: { min: 0, max: 0, default: 0 },
  options: {
    network: icmMetrics.options.network!,
    srcBlockchainId: { ...icmMetrics.options.srcBlockchainId!, doc: 'only messages from this chain (cb58 blockchain id); default all' },
    destBlockchainId: { ...icmMetrics.options.destBlockchainId!, doc: 'only messages to this chain (cb58 blockchain id); default all' },
  },
  // The ICM series' rules for the two ids (it takes no time keys here).
  check: icmMetrics.check,
  partitions: (s) => {
    const network = String(s.network);
    const query: Record<string, string> = { network };
    for (const k of ['srcBlockchainId', 'destBlockchainId'] as const) if (s[k] !== undefined) query[k] = String(s[k]);
    const id = [network, ...['srcBlockchainId', 'destBlockchainId'].filter((k) => query[k] !== undefined).map((k) => `${k}=${query[k]}`)].join('/');
    return [{ id, path: {}, query, values: { network } }];
  },
  refresh: 'merge',
  mergeScope: 'partition',
  key: ['network', 'src_blockchain_id', 'dest_blockchain_id', 'snapshot_at'],
  keyDoc: "a snapshot per run and route: 'all' where a side is not filtered",
  columns: [
    { name: 'network', type: 'varchar', partition: 'network', doc: 'mainnet, fuji or testnet' },
    { name: 'src_blockchain_id', type: 'varchar', from: 'srcBlockchainId', required: true, doc: "source chain (cb58), or 'all'" },
    { name: 'dest_blockchain_id', type: 'varchar', from: 'destBlockchainId', required: true, doc: "destination chain (cb58), or 'all'" },
    SNAPSHOT_COLUMN,
    ...WINDOW_COLUMNS.map((c) => ({ ...c, doc: `messages ${c.doc.replace(/^over /, 'in ')}` })),
  ],
};
