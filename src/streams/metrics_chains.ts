import type { StreamDecl } from '../decl/stream.js';

export const metricsChains: StreamDecl = {
  table: 'metrics_chains',
  doc: 'the chains the metrics service has metrics for, with their blockchain and subnet ids',
  service: 'metrics',
  endpoint: '/v2/chains',
  items: 'chains',
  weight: 1,
  // The listing takes a page token but no page size.
  pageSize: { min: 0, max: 0, default: 0 },
  options: {
    network: { kind: 'enum', values: ['mainnet', 'testnet'], doc: 'only mainnet chains, or only test chains; default all' },
  },
  partitions: (s) => {
    const query: Record<string, string> = s.network === undefined ? {} : { network: String(s.network) };
    return [{ id: s.network === undefined ? 'all' : `network=${s.network}`, path: {}, query, values: {} }];
  },
  refresh: 'merge',
  mergeScope: 'table',
  key: ['evm_chain_id'],
  keyDoc: 'a chain once listed stays',
  columns: [
    { name: 'evm_chain_id', type: 'bigint', from: 'evmChainId', required: true, doc: 'EVM chain id (chains.chain_id as a number)' },
    { name: 'chain_name', type: 'varchar', from: 'chainName', required: true, doc: "the service's alias for the chain (c_chain)" },
    { name: 'blockchain_id', type: 'varchar', from: 'blockchainId', required: true, doc: 'blockchain id (cb58)' },
    { name: 'subnet_id', type: 'varchar', from: 'subnetId', required: true, doc: 'its subnet (the primary network: 11111111111111111111111111111111LpoYY)' },
    { name: 'network', type: 'varchar', from: 'network', required: true, doc: 'mainnet or testnet' },
  ],
};
