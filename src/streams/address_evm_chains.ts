import type { StreamDecl } from '../decl/stream.js';

export const addressEvmChains: StreamDecl = {
  table: 'address_evm_chains',
  doc: 'the EVM chains each listed address is active on, as the data service indexes them (one row per address and chain)',
  service: 'data',
  endpoint: '/v1/address/{address}/chains',
  items: 'indexedChains',
  weight: 20,
  pageSize: { min: 0, max: 0, default: 0 },
  options: {
    addresses: { kind: 'evm_address[]', required: true, doc: 'addresses, a request each' },
  },
  partitions: (s) =>
    (s.addresses as string[]).map((a) => {
      const address = a.toLowerCase();
      return { id: address, path: { address }, query: {}, values: { address } };
    }),
  refresh: 'replace',
  mergeScope: 'partition',
  key: ['address', 'chain_id'],
  keyDoc: "a fetch replaces the address's chains",
  // The chain's own details are the chains table's; an unindexed chain (unindexedChains) has none.
  knownFields: ['status', 'description', 'platformChainId', 'subnetId', 'vmId', 'vmName', 'explorerUrl', 'rpcUrl', 'wsUrl', 'isTestnet', 'utilityAddresses', 'networkToken', 'chainLogoUri', 'private', 'enabledFeatures'],
  columns: [
    { name: 'address', type: 'evm_address', partition: 'address', doc: 'the listed address, lowercased' },
    { name: 'chain_id', type: 'varchar', from: 'chainId', required: true, doc: 'EVM chain id (join chains for its details)' },
    { name: 'chain_name', type: 'varchar', from: 'chainName', doc: 'chain name' },
    { name: 'blockchain_id', type: 'varchar', from: 'platformChainId', doc: 'blockchain id (cb58)' },
    { name: 'is_testnet', type: 'boolean', from: 'isTestnet', doc: 'a test chain' },
  ],
};
