import type { StreamDecl } from '../decl/stream.js';
import { addressColumns, BLOCK_COLUMNS, BLOCK_RANGE_OPTIONS, blockRangeCheck, PRICE_KEYS } from './common.js';
import { CHUNKED_BLOCK_CURSOR, CHUNKS_OPTION } from './chain_reads.js';

const isObject = (v: unknown) => v !== null && typeof v === 'object';

/** The transfer's form is told by which token key is present (docs/services.md, Data service). Runs once a row. */
function tokenType(item: Record<string, unknown>): string | undefined {
  if (isObject(item.erc20Token)) return 'ERC-20';
  if (isObject(item.erc721Token)) return 'ERC-721';
  if (isObject(item.erc1155Token)) return 'ERC-1155';
  return undefined;
}

export const ercTransfers: StreamDecl = {
  table: 'erc_transfers',
  doc: 'ERC-20, ERC-721 and ERC-1155 transfers of token contracts',
  service: 'data',
  endpoint: '/v1/chains/{chainId}/tokens/{address}/transfers',
  items: 'transfers',
  weight: 20,
  // Prices are JSON numbers (Money.value): kept as sent.
  exactNumbers: PRICE_KEYS,
  pageSize: { min: 1, max: 100, default: 100 },
  options: {
    chainId: { kind: 'evm_chain_id', required: true, doc: 'EVM chain id (43114) or blockchain id' },
    contracts: { kind: 'evm_address[]', required: true, doc: 'token contracts; one partition each' },
    ...BLOCK_RANGE_OPTIONS,
    ...CHUNKS_OPTION,
  },
  check: blockRangeCheck,
  partitions: (s) =>
    (s.contracts as string[]).map((c) => ({
      id: `${s.chainId}/${c.toLowerCase()}`,
      path: { chainId: String(s.chainId), address: c.toLowerCase() },
      query: {},
      values: { chainId: String(s.chainId) },
    })),
  refresh: 'append',
  blockCursor: CHUNKED_BLOCK_CURSOR,
  // An ERC-1155 batch transfer carries several token ids under one log index.
  key: ['chain_id', 'token_address', 'tx_hash', 'log_index', 'token_id'],
  folder: { key: 'chain', partition: 'chainId' },
  // tokenType only looks at which keys are present. (internal_transactions is not: its id hashes
  // and lowercases text.)
  bytesSafe: true,
  // Not landed: a token's ercType repeats which token object it is (token_type); an ERC-721's
  // ownerAddress is its owner now, not a fact of the transfer.
  knownFields: ['erc20Token.ercType', 'erc721Token.ercType', 'erc1155Token.ercType', 'erc721Token.ownerAddress'],
  columns: [
    { name: 'chain_id', type: 'varchar', partition: 'chainId', doc: 'chain id as given in the pipeline' },
    ...BLOCK_COLUMNS,
    { name: 'log_index', type: 'integer', from: 'logIndex', required: true, doc: 'log index in the block' },
    ...addressColumns('from', 'from'),
    ...addressColumns('to', 'to'),
    { name: 'value', type: 'amount', from: 'value', units: 'token_decimals', doc: 'amount in the smallest unit; NULL for ERC-721 (no value is sent)' },
    { name: 'token_address', type: 'evm_address', from: ['erc20Token.address', 'erc721Token.address', 'erc1155Token.address'], required: true, doc: 'token contract' },
    { name: 'token_type', type: 'varchar', derive: tokenType, required: true, doc: "'ERC-20', 'ERC-721' or 'ERC-1155'" },
    { name: 'token_id', type: 'varchar', from: ['erc721Token.tokenId', 'erc1155Token.tokenId'], doc: 'NFT token id (NULL for ERC-20)' },
    { name: 'token_name', type: 'varchar', from: ['erc20Token.name', 'erc721Token.name', 'erc1155Token.metadata.name'], doc: 'token name' },
    { name: 'token_symbol', type: 'varchar', from: ['erc20Token.symbol', 'erc721Token.symbol', 'erc1155Token.metadata.symbol'], doc: 'token symbol' },
    { name: 'token_decimals', type: 'integer', from: ['erc20Token.decimals', 'erc1155Token.metadata.decimals'], doc: 'token decimals' },
    { name: 'token_logo_uri', type: 'varchar', from: 'erc20Token.logoUri', doc: 'token logo' },
    { name: 'token_uri', type: 'varchar', from: ['erc721Token.tokenUri', 'erc1155Token.tokenUri'], doc: 'NFT token URI' },
    { name: 'token_metadata', type: 'json', from: ['erc721Token.metadata', 'erc1155Token.metadata'], doc: 'NFT metadata as sent (JSON)' },
    { name: 'token_price_currency', type: 'varchar', from: 'erc20Token.price.currencyCode', doc: 'currency of token_price' },
    { name: 'token_price', type: 'varchar', from: 'erc20Token.price.value', doc: 'token price as sent (exact text)' },
  ],
};
