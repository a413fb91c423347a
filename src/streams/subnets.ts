import type { Partition, StreamConfig, StreamDecl } from '../decl/stream.js';
import { NETWORK_COLUMN } from './common.js';

/** The listing both subnets and blockchains are read from: one partition per network. */
export const SUBNETS_LISTING = {
  service: 'data',
  endpoint: '/v1/networks/{network}/subnets',
  items: 'subnets',
  weight: 20,
  // Subnets carry their blockchains' genesis data (allocations, contract code): pages of the
  // service's maximum of 10000 could run to many megabytes.
  pageSize: { min: 1, max: 10_000, default: 1000 },
  options: { network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' } },
  partitions: (s: StreamConfig): Partition[] => {
    const network = String(s.network);
    return [{ id: network, path: { network }, query: {}, values: { network } }];
  },
  refresh: 'merge',
  mergeScope: 'table',
} satisfies Partial<StreamDecl>;

export const subnets: StreamDecl = {
  table: 'subnets',
  doc: 'subnets of a network (dimension): owners, L1 conversion, blockchain ids',
  ...SUBNETS_LISTING,
  key: ['network', 'subnet_id'],
  keyDoc: 'network included: the primary network has the same subnet id on every network',
  knownFields: ['blockchains'],
  columns: [
    NETWORK_COLUMN,
    { name: 'subnet_id', type: 'varchar', from: 'subnetId', required: true, doc: 'subnet id (cb58)' },
    { name: 'create_block_timestamp', type: 'timestamptz', from: 'createBlockTimestamp', doc: 'time of the P-Chain block that created it (UTC)' },
    { name: 'create_block_index', type: 'bigint', from: 'createBlockIndex', doc: 'height of that P-Chain block' },
    // subnetOwnershipInfo is current; ownerAddresses/threshold/locktime are its deprecated forerunners.
    { name: 'owner_addresses', type: 'varchar[]', from: ['subnetOwnershipInfo.addresses', 'ownerAddresses'], doc: 'addresses that may sign subnet changes' },
    { name: 'owner_threshold', type: 'integer', from: ['subnetOwnershipInfo.threshold', 'threshold'], doc: 'signatures required' },
    { name: 'owner_locktime', type: 'bigint', from: ['subnetOwnershipInfo.locktime', 'locktime'], doc: 'time after which the owners may act (Unix seconds, as sent)' },
    { name: 'is_l1', type: 'boolean', from: 'isL1', doc: 'true once converted to an L1' },
    { name: 'l1_conversion_tx_hash', type: 'varchar', from: 'l1ConversionTransactionHash', doc: 'the ConvertSubnetToL1Tx' },
    { name: 'l1_validator_manager_blockchain_id', type: 'varchar', from: 'l1ValidatorManagerDetails.blockchainId', doc: 'blockchain of the validator manager contract' },
    { name: 'l1_validator_manager_address', type: 'evm_address', from: 'l1ValidatorManagerDetails.contractAddress', doc: 'validator manager contract, lowercased' },
    {
      name: 'blockchain_ids',
      type: 'varchar[]',
      derive: (s) => (Array.isArray(s.blockchains) ? s.blockchains.map((b) => (b !== null && typeof b === 'object' ? (b as Record<string, unknown>).blockchainId : b)) : s.blockchains),
      doc: 'its blockchains (details in the blockchains table)',
    },
  ],
};
