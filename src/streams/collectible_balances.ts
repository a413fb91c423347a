import type { StreamDecl } from '../decl/stream.js';
import { SNAPSHOT_COLUMNS } from './native_balances.js';
import { NFT_ID_COLUMNS, NFT_METADATA_COLUMNS, nftSnapshot } from './nft_balances.js';

/**
 * ERC-721 and ERC-1155 holdings in one listing, in the columns of both balance tables: erc_type
 * tells the two apart. Like the ERC-721 listing it takes no block, so a snapshot is of the head
 * pinned just before it (docs/services.md, Data service).
 */
export const collectibleBalances: StreamDecl = {
  table: 'collectible_balances',
  doc: 'ERC-721 and ERC-1155 tokens held by addresses in one listing, a snapshot at the head (the head is pinned first with `GET /v1/chains/{chainId}/blocks`, 10 CU)',
  endpoint: '/v1/chains/{chainId}/addresses/{address}/balances:listCollectibles',
  items: 'collectibleBalances',
  ...nftSnapshot(false),
  columns: [
    ...SNAPSHOT_COLUMNS,
    ...NFT_ID_COLUMNS,
    { name: 'balance', type: 'amount', from: 'balance', doc: 'ERC-1155: tokens of this id held; NULL for ERC-721 (a row is a token held, no amount is sent)' },
    { name: 'token_name', type: 'varchar', from: 'name', doc: 'ERC-721: collection name' },
    { name: 'token_symbol', type: 'varchar', from: 'symbol', doc: 'ERC-721: collection symbol' },
    { name: 'owner_address', type: 'evm_address', from: 'ownerAddress', doc: 'ERC-721: owner as the service sends it (when it does), lowercased' },
    ...NFT_METADATA_COLUMNS,
    { name: 'metadata_attributes', type: 'varchar', from: 'metadata.attributes', doc: 'ERC-721: attributes, free-form text as sent (usually a JSON array)' },
    { name: 'metadata_decimals', type: 'integer', from: 'metadata.decimals', doc: 'ERC-1155: decimals in the metadata' },
    { name: 'metadata_properties', type: 'varchar', from: 'metadata.properties', doc: 'ERC-1155: properties, free-form text as sent (usually a JSON object)' },
  ],
};
