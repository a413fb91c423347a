import type { StreamDecl } from '../decl/stream.js';
import { SNAPSHOT_COLUMNS } from './native_balances.js';
import { NFT_ID_COLUMNS, NFT_METADATA_COLUMNS, nftSnapshot } from './nft_balances.js';

export const erc721Balances: StreamDecl = {
  table: 'erc721_balances',
  doc: 'ERC-721 tokens held by addresses, a snapshot at the head (the head is pinned first with `GET /v1/chains/{chainId}/blocks`, 10 CU)',
  endpoint: '/v1/chains/{chainId}/addresses/{address}/balances:listErc721',
  items: 'erc721TokenBalances',
  ...nftSnapshot(false),
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
