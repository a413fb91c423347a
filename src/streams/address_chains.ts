import type { Partition, StreamDecl } from '../decl/stream.js';
import { NETWORK_COLUMN, queryPartition } from './common.js';

/** Addresses per request: keeps the query string short. */
const ADDRESSES_PER_REQUEST = 20;

/** The primary network's blockchain ids (docs/services.md, Identifiers; the same P-Chain id on every network). */
const CHAIN_NAMES: Record<string, string> = {
  '11111111111111111111111111111111LpoYY': 'P-Chain',
  '2oYMBNV4eNHyqk2fjjV5nVQLDbtmNJzq5s3qs3Lo6ftnC6FByM': 'X-Chain',
  '2JVSBoinj9C2J33VntvzYtVJNZdN2NKiwwKjcumHUWEb5DbBrm': 'X-Chain',
  '2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5': 'C-Chain',
  yH8D7ThNJkxmtkuv2jgBa4P1Rn3Qpr4pPr7QYNfcdoS6k6HWp: 'C-Chain',
};

export const addressChains: StreamDecl = {
  table: 'address_chains',
  doc: 'the primary-network chains each listed address has interacted with (one row per address and chain)',
  service: 'data',
  endpoint: '/v1/networks/{network}/addresses:listChainIds',
  items: 'addresses',
  explode: 'blockchainIds',
  weight: 100,
  pageSize: { min: 0, max: 0, default: 0 },
  options: {
    network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
    addresses: { kind: 'primary_address[]', required: true, doc: `P-/X-chain addresses (avax1..., P-avax1...); ${ADDRESSES_PER_REQUEST} to a request` },
  },
  partitions: (s) => {
    const list = s.addresses as string[];
    const out: Partition[] = [];
    for (let i = 0; i < list.length; i += ADDRESSES_PER_REQUEST) out.push(queryPartition(String(s.network), { addresses: list.slice(i, i + ADDRESSES_PER_REQUEST).join(',') }));
    return out;
  },
  refresh: 'merge',
  mergeScope: 'table',
  key: ['network', 'address', 'blockchain_id'],
  keyDoc: 'an address that has touched no chain has no row; an interaction once seen stays',
  columns: [
    NETWORK_COLUMN,
    { name: 'address', type: 'varchar', from: '_parent.address', required: true, doc: 'the address as listed' },
    { name: 'blockchain_id', type: 'varchar', from: '_value', required: true, doc: 'a blockchain it has interacted with' },
    { name: 'chain_name', type: 'varchar', derive: (r) => (typeof r._value === 'string' ? CHAIN_NAMES[r._value] : undefined), doc: 'P-Chain, X-Chain or C-Chain for the ids of the primary network' },
  ],
};
