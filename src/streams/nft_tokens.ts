import type { StreamDecl } from '../decl/stream.js';
import { CHAIN_ID_OPTION } from './chain_reads.js';

export const nftTokens: StreamDecl = {
  table: 'nft_tokens',
  doc: "the tokens of NFT collections (ERC-721, ERC-1155) with their metadata and an ERC-721's owner, as the data service indexes them",
  service: 'data',
  endpoint: '/v1/chains/{chainId}/nfts/collections/{address}/tokens',
  items: 'tokens',
  weight: 20,
  pageSize: { min: 1, max: 100, default: 100 },
  options: {
    chainId: CHAIN_ID_OPTION,
    collections: { kind: 'evm_address[]', required: true, doc: 'NFT contracts; one partition each' },
  },
  partitions: (s) =>
    (s.collections as string[]).map((c) => {
      const chainId = String(s.chainId);
      const address = c.toLowerCase();
      return { id: `${chainId}/${address}`, path: { chainId, address }, query: {}, values: { chainId } };
    }),
  // A token's owner and metadata change: each fetch merges the newest into the table.
  refresh: 'merge',
  mergeScope: 'partition',
  key: ['chain_id', 'token_address', 'token_id'],
  folder: { key: 'chain', partition: 'chainId' },
  columns: [
    { name: 'chain_id', type: 'varchar', partition: 'chainId', doc: 'chain id as given in the pipeline' },
    { name: 'token_address', type: 'evm_address', from: 'address', required: true, doc: 'the collection (contract), lowercased' },
    { name: 'token_id', type: 'varchar', from: 'tokenId', required: true, doc: 'token id (a uint256 as decimal text)' },
    { name: 'token_type', type: 'varchar', from: 'ercType', required: true, doc: "'ERC-721' or 'ERC-1155'" },
    { name: 'name', type: 'varchar', from: 'name', doc: 'collection name (ERC-721)' },
    { name: 'symbol', type: 'varchar', from: 'symbol', doc: 'collection symbol (ERC-721)' },
    { name: 'token_uri', type: 'varchar', from: 'tokenUri', doc: 'token URI' },
    { name: 'owner_address', type: 'evm_address', from: 'ownerAddress', doc: "an ERC-721 token's owner as the service knows it, lowercased (NULL for ERC-1155)" },
    { name: 'metadata_name', type: 'varchar', from: 'metadata.name', doc: 'name in the metadata' },
    { name: 'metadata_index_status', type: 'varchar', from: 'metadata.indexStatus', doc: "the metadata's index status (INDEXED, UNINDEXED, ...)" },
    { name: 'metadata', type: 'json', from: 'metadata', doc: 'metadata as sent (JSON)' },
  ],
};
