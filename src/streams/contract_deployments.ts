import type { StreamDecl } from '../decl/stream.js';
import { CHAIN_ID_COLUMN } from './common.js';
import { CHAIN_ID_OPTION } from './chain_reads.js';
import { addressPartitions } from './address_transactions.js';
import { contracts } from './contracts.js';

export const contractDeployments: StreamDecl = {
  table: 'contract_deployments',
  doc: 'contracts deployed by addresses (as sender or as deploying contract), with their metadata',
  service: 'data',
  endpoint: '/v1/chains/{chainId}/contracts/{address}/deployments',
  items: 'contracts',
  weight: 20,
  pageSize: { min: 1, max: 100, default: 100 },
  options: {
    chainId: CHAIN_ID_OPTION,
    addresses: { kind: 'evm_address[]', required: true, doc: 'deployers; one partition each' },
  },
  partitions: addressPartitions,
  refresh: 'merge',
  mergeScope: 'partition',
  key: ['chain_id', 'deployer', 'address'],
  keyDoc: 'a contract once per listed deployer; a rerun replaces it with its metadata as served then',
  knownFields: contracts.knownFields,
  // An item is the contract metadata `contracts` lands (by `GET /v1/chains/{chainId}/addresses/{address}`).
  columns: [
    CHAIN_ID_COLUMN,
    { name: 'deployer', type: 'evm_address', partition: 'address', doc: 'the listed deployer this row was fetched for, lowercased' },
    ...contracts.columns.filter((c) => c.name !== 'chain_id'),
  ],
};
