import type { Page } from '../decl/request.js';
import type { ExtractContext, StreamDecl } from '../decl/stream.js';
import { CHAIN_ID_COLUMN } from './common.js';
import { CHAIN_ID_OPTION, getJson } from './chain_reads.js';

/** The endpoint answers with the record itself, not a list: one page of one item. */
async function* contractPage(x: ExtractContext): AsyncGenerator<Page> {
  yield { items: [await getJson(x, x.path, x.endpoint)] };
}

/** `type:url`; a malformed link is passed on as is, so the row is rejected with its reason. */
function links(c: Record<string, unknown>): unknown {
  const list = c.resourceLinks;
  if (!Array.isArray(list)) return list;
  return list.map((l) => {
    const o = l as Record<string, unknown> | null;
    return o && typeof o.type === 'string' && typeof o.url === 'string' ? `${o.type}:${o.url}` : l;
  });
}

export const contracts: StreamDecl = {
  table: 'contracts',
  doc: 'contract metadata of listed addresses (name, links, tags, deployment), one request per address',
  service: 'data',
  endpoint: '/v1/chains/{chainId}/addresses/{address}',
  items: 'contract',
  extract: contractPage,
  // Not published; taken to be a single-record read like a block.
  weight: 10,
  pageSize: { min: 0, max: 0, default: 0 },
  options: {
    chainId: CHAIN_ID_OPTION,
    addresses: { kind: 'evm_address[]', required: true, doc: 'contract addresses; one partition each' },
  },
  partitions: (s) =>
    (s.addresses as string[]).map((address) => ({
      id: `${s.chainId}/${address}`,
      path: { chainId: String(s.chainId), address },
      query: {},
      values: { chainId: String(s.chainId) },
    })),
  refresh: 'merge',
  mergeScope: 'table',
  key: ['chain_id', 'address'],
  knownFields: ['resourceLinks'],
  columns: [
    CHAIN_ID_COLUMN,
    { name: 'address', type: 'evm_address', from: 'address', required: true, doc: 'contract address, lowercased' },
    { name: 'erc_type', type: 'varchar', from: 'ercType', required: true, doc: 'ERC-20, ERC-721, ERC-1155 or UNKNOWN' },
    { name: 'name', type: 'varchar', from: 'name', doc: 'name' },
    { name: 'symbol', type: 'varchar', from: 'symbol', doc: 'token symbol' },
    { name: 'decimals', type: 'integer', from: 'decimals', doc: 'token decimals (ERC-20)' },
    { name: 'description', type: 'varchar', from: 'description', doc: 'description' },
    { name: 'official_site', type: 'varchar', from: 'officialSite', doc: 'official site' },
    { name: 'email', type: 'varchar', from: 'email', doc: 'contact email' },
    { name: 'color', type: 'varchar', from: 'color', doc: 'brand color' },
    { name: 'logo_asset_id', type: 'varchar', from: 'logoAsset.assetId', doc: 'logo asset id' },
    { name: 'logo_uri', type: 'varchar', from: 'logoAsset.imageUri', doc: 'logo image' },
    { name: 'banner_asset_id', type: 'varchar', from: 'bannerAsset.assetId', doc: 'banner asset id' },
    { name: 'banner_uri', type: 'varchar', from: 'bannerAsset.imageUri', doc: 'banner image' },
    { name: 'resource_links', type: 'varchar[]', derive: links, doc: "links as 'type:url' (Website:https://..., Twitter:...)" },
    { name: 'tags', type: 'varchar[]', from: 'tags', doc: 'tags' },
    { name: 'deployment_tx_hash', type: 'varchar', from: 'deploymentDetails.txHash', doc: 'transaction that deployed it' },
    { name: 'deployer_address', type: 'evm_address', from: 'deploymentDetails.deployerAddress', doc: 'account that sent that transaction, lowercased' },
    { name: 'deployer_contract_address', type: 'evm_address', from: 'deploymentDetails.deployerContractAddress', doc: 'contract that deployed it, when deployed by a contract, lowercased' },
    { name: 'coingecko_coin_id', type: 'varchar', from: 'pricingProviders.coingeckoCoinId', doc: 'CoinGecko id of the token' },
  ],
};
