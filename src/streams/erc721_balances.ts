import type { StreamDecl } from '../decl/stream.js';
import { SNAPSHOT_COLUMNS, SNAPSHOT_KEY_DOC } from './native_balances.js';
import { NFT_ID_COLUMNS, NFT_KEY, NFT_METADATA_COLUMNS, NFT_OPTIONS, nftPartitions, pinnedPages } from './nft_balances.js';

export const erc721Balances: StreamDecl = {
  table: 'erc721_balances',
  doc: 'ERC-721 tokens held by addresses, a snapshot at the head (the head is pinned first with `GET /v1/chains/{chainId}/blocks`, 10 CU)',
  service: 'data',
  endpoint: '/v1/chains/{chainId}/addresses/{address}/balances:listErc721',
  items: 'erc721TokenBalances',
  extract: pinnedPages(false),
  weight: 20,
  pageSize: { min: 1, max: 500, default: 500 },
  options: NFT_OPTIONS,
  partitions: nftPartitions,
  refresh: 'merge',
  mergeScope: 'partition',
  key: NFT_KEY,
  keyDoc: `${SNAPSHOT_KEY_DOC}; the endpoint takes no block, so the block is the head pinned just before the listing`,
  knownFields: ['chainId'],
  columns: [
    ...SNAPSHOT_COLUMNS,
    ...NFT_ID_COLUMNS,
    { name: 'token_name', type: 'varchar', from: 'name', doc: 'collection name' },
    { name: 'token_symbol', type: 'varchar', from: 'symbol', doc: 'collection symbol' },
    { name: 'owner_address', type: 'evm_address', from: 'ownerAddress', doc: 'owner as the service sends it (when it does), lowercased' },
    ...NFT_METADATA_COLUMNS,
    { name: 'metadata_attributes', type: 'varchar', from: 'metadata.attributes', doc: 'attributes: free-form text as sent (usually a JSON array)' },
  ],
};
