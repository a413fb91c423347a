import type { StreamDecl } from '../decl/stream.js';
import { oneAnswer } from './chain_rolling_metrics.js';

export const addressLastActivity: StreamDecl = {
  table: 'address_last_activity',
  doc: "each listed address's last activity on a primary-network chain: the newest transaction that created or consumed a UTXO of it",
  service: 'data',
  endpoint: '/v1/networks/{network}/blockchains/{blockchainId}/lastActivityTimestampByAddresses',
  items: 'activity',
  // The answer is one object for all the addresses asked: one address a request, for a row each.
  extract: oneAnswer({ stamp: false }),
  weight: 100,
  pageSize: { min: 0, max: 0, default: 0 },
  options: {
    network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
    blockchainId: { kind: 'enum', values: ['p-chain', 'x-chain', 'c-chain'], required: true, doc: 'p-chain, x-chain or c-chain' },
    addresses: { kind: 'primary_address[]', required: true, doc: 'P-/X-chain addresses (avax1..., P-avax1...), a request each' },
  },
  partitions: (s) => {
    const network = String(s.network);
    const blockchainId = String(s.blockchainId);
    return (s.addresses as string[]).map((address) => ({
      id: `${network}/${blockchainId}/${address}`, path: { network, blockchainId }, query: { addresses: address }, values: { network, blockchainId, address },
    }));
  },
  // The last activity moves on: a fetch replaces the address's row.
  refresh: 'replace',
  mergeScope: 'partition',
  key: ['network', 'blockchain_id', 'address'],
  keyDoc: 'an address once per chain: its newest activity as of the last run',
  columns: [
    { name: 'network', type: 'varchar', partition: 'network', doc: 'mainnet, fuji or testnet, as given in the pipeline' },
    { name: 'blockchain_id', type: 'varchar', partition: 'blockchainId', doc: 'p-chain, x-chain or c-chain, as given in the pipeline' },
    { name: 'address', type: 'varchar', partition: 'address', doc: 'the address as given in the pipeline' },
    { name: 'timestamp', type: 'timestamptz', from: 'timestamp', required: true, doc: 'when the last activity happened (UTC)' },
    { name: 'block_number', type: 'bigint', from: 'blockNumber', required: true, doc: 'its block' },
    { name: 'tx_hash', type: 'varchar', from: 'txHash', required: true, doc: 'the transaction that created or consumed a UTXO of the address' },
    { name: 'utxo_id', type: 'varchar', from: 'utxoId', required: true, doc: 'that UTXO' },
    { name: 'is_consumed', type: 'boolean', from: 'isConsumed', required: true, doc: 'the activity consumed the UTXO (else created it)' },
    { name: 'chain_name', type: 'varchar', from: 'chainName', doc: 'p-chain, x-chain or c-chain' },
    { name: 'chain_network', type: 'varchar', from: 'network', doc: "the service's name of the network (mainnet or fuji)" },
  ],
};
