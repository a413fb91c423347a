// The staking transactions of addresses that are still active (their stake locked), as the data
// service lists them: the items are the platform chain's transactions, so the columns are
// platform_transactions', with the address whose listing sent them.
import type { Column, StreamDecl } from '../decl/stream.js';
import { PLATFORM_TX_STREAM, partitionsOf, TX_TIME_OPTIONS, txTypesCheck } from './platform_reads.js';
import { platformTransactions } from './platform_transactions.js';

/** The transactions that stake AVAX on the primary network: the only ones the listing holds. */
export const STAKING_TX_TYPES = ['AddValidatorTx', 'AddDelegatorTx', 'AddPermissionlessValidatorTx', 'AddPermissionlessDelegatorTx'] as const;

const ADDRESS_COLUMN: Column = { name: 'address', type: 'varchar', partition: 'address', doc: 'the address whose staking transactions these are, as given in the pipeline' };

export const stakingTransactions: StreamDecl = {
  table: 'staking_transactions',
  doc: 'staking transactions (validations, delegations) of P-Chain addresses while their stake is locked, by time; a row stays once it unlocks: platform_transactions\' columns, per address',
  service: 'data',
  endpoint: '/v1/networks/{network}/blockchains/{blockchainId}/transactions:listStaking',
  items: 'transactions',
  weight: 100,
  pageSize: { min: 1, max: 100, default: 100 },
  options: {
    network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
    addresses: { kind: 'primary_address[]', required: true, doc: 'P-Chain addresses whose active staking transactions to list; one partition each' },
    txTypes: { kind: 'string[]', doc: `only transactions of these types (${STAKING_TX_TYPES.join(', ')})` },
    ...TX_TIME_OPTIONS,
  },
  check: (s) => txTypesCheck(s, STAKING_TX_TYPES, 'a staking'),
  // The platform listing's partitions (an address each), with the address as a column's value.
  partitions: (s) => partitionsOf(s).map((p) => ({ ...p, values: { ...p.values, address: p.query.addresses! } })),
  refresh: 'merge',
  // A transaction listed for two addresses (its owner and its reward address) is a row of each:
  // the rows of a partition are that address's, so the merge stays within it.
  mergeScope: 'partition',
  // The listing holds a transaction while its stake is locked; a run asks from the newest one
  // committed on, and a row stays after its stake unlocks (end_timestamp says when).
  timeCursor: PLATFORM_TX_STREAM.timeCursor,
  exactNumbers: PLATFORM_TX_STREAM.exactNumbers,
  key: ['network', 'address', 'tx_hash'],
  keyDoc: 'a transaction once per address whose listing sent it: its owner\'s and its reward address\'s',
  knownFields: platformTransactions.knownFields!,
  columns: [platformTransactions.columns[0]!, ADDRESS_COLUMN, ...platformTransactions.columns.slice(1)],
};
