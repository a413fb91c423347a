// What the ERC-721 and ERC-1155 balance snapshots share: how a snapshot is pinned, the partitions,
// and the NFT's metadata as columns.
import type { Page } from '../decl/request.js';
import type { Column, ExtractContext, OptionSpec, Partition, StreamConfig, StreamDecl } from '../decl/stream.js';
import { CHAIN_ID_OPTION, snapshotBlock, stamped } from './chain_reads.js';
import { SNAPSHOT_KEY_DOC } from './native_balances.js';

/**
 * A snapshot pinned to a block: the one asked for, else the head now. `asks` says whether the
 * endpoint takes `blockNumber`; the ERC-721 listing does not (docs/services.md, Data service), so
 * its rows carry the head pinned just before the listing, which the service reads as its latest.
 */
export function pinnedPages(asks: boolean) {
  return async function* (x: ExtractContext): AsyncGenerator<Page> {
    const snap = await snapshotBlock(x, x.partition.path.chainId!, x.config.blockNumber as number | undefined);
    const query = asks ? { ...x.query, blockNumber: snap.blockNumber } : x.query;
    // Pages are rebuilt without the raw body: their items carry the snapshot, which the body does not.
    for await (const page of x.paginate({ query })) yield { items: stamped(page.items, snap), next: page.next };
  };
}

export const NFT_OPTIONS: Record<string, OptionSpec> = {
  chainId: CHAIN_ID_OPTION,
  addresses: { kind: 'evm_address[]', required: true, doc: 'holders whose tokens to snapshot; one partition each' },
  contractAddresses: { kind: 'evm_address[]', doc: 'only these token contracts (the service takes one a request: one partition per holder and contract)' },
};

/** A partition per holder, or per holder and contract when the entry names contracts. */
export function nftPartitions(s: StreamConfig): Partition[] {
  const chainId = String(s.chainId);
  const contracts = (s.contractAddresses as string[] | undefined)?.map((c) => c.toLowerCase());
  return (s.addresses as string[]).flatMap((a) => {
    const address = a.toLowerCase();
    const one = (contract?: string): Partition => ({
      id: contract ? `${chainId}/${address}/${contract}` : `${chainId}/${address}`,
      path: { chainId, address },
      query: contract ? { contractAddress: contract } : {},
      values: { chainId, address },
    });
    return contracts?.length ? contracts.map(one) : [one()];
  });
}

export const NFT_KEY = ['chain_id', 'address', 'block_number', 'token_address', 'token_id'];

/**
 * What a holder's NFT snapshot declares beside its table, listing and columns. `asksBlock`: the
 * endpoint takes `blockNumber` (ERC-1155's does); the ERC-721 and collectibles listings do not, so
 * their rows carry the head pinned just before the listing.
 */
export function nftSnapshot(asksBlock: boolean): Pick<StreamDecl, 'service' | 'extract' | 'weight' | 'pageSize' | 'options' | 'partitions' | 'refresh' | 'mergeScope' | 'key' | 'keyDoc' | 'knownFields'> {
  return {
    service: 'data',
    extract: pinnedPages(asksBlock),
    weight: 20,
    pageSize: { min: 1, max: 500, default: 500 },
    options: asksBlock ? { ...NFT_OPTIONS, blockNumber: { kind: 'int', min: 0, doc: 'block of the snapshot; default the latest block at the time of the run' } } : NFT_OPTIONS,
    partitions: nftPartitions,
    refresh: 'merge',
    mergeScope: 'partition',
    key: NFT_KEY,
    keyDoc: asksBlock ? SNAPSHOT_KEY_DOC : `${SNAPSHOT_KEY_DOC}; the endpoint takes no block, so the block is the head pinned just before the listing`,
    knownFields: ['chainId'],
  };
}

export const NFT_ID_COLUMNS: Column[] = [
  { name: 'token_address', type: 'evm_address', from: 'address', required: true, doc: 'token contract, lowercased' },
  { name: 'token_id', type: 'varchar', from: 'tokenId', required: true, doc: 'token id (uint256 as decimal text)' },
  { name: 'erc_type', type: 'varchar', from: 'ercType', doc: 'as sent' },
  { name: 'token_uri', type: 'varchar', from: 'tokenUri', doc: 'token URI as sent (ipfs://, https://, data:)' },
];

/** The indexer's metadata of the token: its status and the fields common to both standards. */
export const NFT_METADATA_COLUMNS: Column[] = [
  { name: 'metadata_index_status', type: 'varchar', from: 'metadata.indexStatus', doc: 'INDEXED, UNINDEXED, INVALID_TOKEN_URI, ... (text as sent)' },
  { name: 'metadata_updated_at', type: 'timestamptz', from: 'metadata.metadataLastUpdatedTimestamp', doc: 'when the indexer last read the metadata (UTC)' },
  { name: 'metadata_name', type: 'varchar', from: 'metadata.name', doc: 'name in the metadata' },
  { name: 'metadata_symbol', type: 'varchar', from: 'metadata.symbol', doc: 'symbol in the metadata' },
  { name: 'metadata_image_uri', type: 'varchar', from: 'metadata.imageUri', doc: 'image' },
  { name: 'metadata_description', type: 'varchar', from: 'metadata.description', doc: 'description' },
  { name: 'metadata_animation_uri', type: 'varchar', from: 'metadata.animationUri', doc: 'animation' },
  { name: 'metadata_external_url', type: 'varchar', from: 'metadata.externalUrl', doc: 'external link' },
  { name: 'metadata_background', type: 'varchar', from: 'metadata.background', doc: 'background colour' },
];
