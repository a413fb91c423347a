import type { StreamDecl } from '../decl/stream.js';
import { SNAPSHOT_COLUMNS } from './native_balances.js';
import { NFT_ID_COLUMNS, NFT_METADATA_COLUMNS, nftSnapshot } from './nft_balances.js';

export const erc1155Balances: StreamDecl = {
  table: 'erc1155_balances',
  doc: 'ERC-1155 balance snapshots of addresses at a block (the block is pinned first with `GET /v1/chains/{chainId}/blocks[/{blockId}]`, 10 CU)',
  endpoint: '/v1/chains/{chainId}/addresses/{address}/balances:listErc1155',
  items: 'erc1155TokenBalances',
  ...nftSnapshot(true),
  columns: [
    ...SNAPSHOT_COLUMNS,
    ...NFT_ID_COLUMNS,
    { name: 'balance', type: 'amount', from: 'balance', required: true, doc: 'tokens of this id held' },
    ...NFT_METADATA_COLUMNS,
    { name: 'metadata_decimals', type: 'integer', from: 'metadata.decimals', doc: 'decimals in the metadata' },
    { name: 'metadata_properties', type: 'varchar', from: 'metadata.properties', doc: 'properties: free-form text as sent (usually a JSON object)' },
  ],
};
