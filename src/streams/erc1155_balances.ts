import type { StreamDecl } from '../decl/stream.js';
import { SNAPSHOT_COLUMNS, SNAPSHOT_KEY_DOC } from './native_balances.js';
import { NFT_ID_COLUMNS, NFT_KEY, NFT_METADATA_COLUMNS, NFT_OPTIONS, nftPartitions, pinnedPages } from './nft_balances.js';

export const erc1155Balances: StreamDecl = {
  table: 'erc1155_balances',
  doc: 'ERC-1155 balance snapshots of addresses at a block (the block is pinned first with `GET /v1/chains/{chainId}/blocks[/{blockId}]`, 10 CU)',
  service: 'data',
  endpoint: '/v1/chains/{chainId}/addresses/{address}/balances:listErc1155',
  items: 'erc1155TokenBalances',
  extract: pinnedPages(true),
  weight: 20,
  pageSize: { min: 1, max: 500, default: 500 },
  options: {
    ...NFT_OPTIONS,
    blockNumber: { kind: 'int', min: 0, doc: 'block of the snapshot; default the latest block at the time of the run' },
  },
  partitions: nftPartitions,
  refresh: 'merge',
  mergeScope: 'partition',
  key: NFT_KEY,
  keyDoc: SNAPSHOT_KEY_DOC,
  knownFields: ['chainId'],
  columns: [
    ...SNAPSHOT_COLUMNS,
    ...NFT_ID_COLUMNS,
    { name: 'balance', type: 'amount', from: 'balance', required: true, doc: 'tokens of this id held' },
    ...NFT_METADATA_COLUMNS,
    { name: 'metadata_decimals', type: 'integer', from: 'metadata.decimals', doc: 'decimals in the metadata' },
    { name: 'metadata_properties', type: 'varchar', from: 'metadata.properties', doc: 'properties: free-form text as sent (usually a JSON object)' },
  ],
};
