import type { StreamDecl } from '../decl/stream.js';

export const avgTps: StreamDecl = {
  table: 'avg_tps',
  doc: 'average transactions per second (older metrics endpoint)',
  service: 'metrics',
  endpoint: '/v1/avg_tps/{chainId}',
  items: 'results',
  weight: 100,
  // The endpoint takes no page size; pages are the service's.
  pageSize: { min: 0, max: 0, default: 0 },
  options: {
    chainIds: { kind: 'metrics_chain_id[]', required: true, doc: 'EVM chain ids' },
  },
  partitions: (s) => (s.chainIds as string[]).map((chainId) => ({ id: chainId, path: { chainId }, query: {}, values: { chainId } })),
  refresh: 'merge',
  mergeScope: 'partition',
  timeCursor: { column: 'timestamp' },
  key: ['chain_id', 'timestamp'],
  columns: [
    { name: 'chain_id', type: 'varchar', partition: 'chainId', doc: 'EVM chain id' },
    { name: 'timestamp', type: 'timestamptz', from: 'timestamp', required: true, doc: 'point time (UTC)' },
    { name: 'value', type: 'double', from: 'value', required: true, doc: 'transactions per second' },
  ],
};
