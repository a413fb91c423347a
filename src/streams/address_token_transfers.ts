import type { Partition, StreamConfig, StreamDecl } from '../decl/stream.js';
import { ADDRESS_COLUMN, ADDRESS_LISTING, addressPartitions } from './address_transactions.js';
import { PRICE_KEYS } from './common.js';
import { ercTransfers } from './erc_transfers.js';

/** The listing of each token type under an address (`transactions:<listing>`). */
export const TOKEN_LISTINGS = { 'ERC-20': 'listErc20', 'ERC-721': 'listErc721', 'ERC-1155': 'listErc1155' } as const;
export type TokenType = keyof typeof TOKEN_LISTINGS;
export const TOKEN_TYPES = Object.keys(TOKEN_LISTINGS) as TokenType[];

/** One partition per address and token type, each its own listing (and high-water block). */
function partitions(s: StreamConfig): Partition[] {
  const types = (s.tokenTypes as TokenType[] | undefined) ?? TOKEN_TYPES;
  return addressPartitions(s).flatMap((p) =>
    [...new Set(types)].map((t) => ({
      ...p,
      id: `${p.id}/${t.toLowerCase()}`,
      path: { ...p.path, listing: TOKEN_LISTINGS[t] },
    })),
  );
}

/**
 * The three listings send the three forms of the token transfer listing (tokens/{address}/transfers),
 * which erc_transfers lands in one set of columns: one table, told apart by token_type, so that
 * all of an address's transfers are one query and its rows compare with erc_transfers' directly.
 */
export const addressTokenTransfers: StreamDecl = {
  ...ADDRESS_LISTING,
  table: 'address_token_transfers',
  doc: 'ERC-20, ERC-721 and ERC-1155 transfers of addresses (sent or received), by block range',
  endpoint: '/v1/chains/{chainId}/addresses/{address}/transactions:{listing}',
  items: 'transactions',
  // Prices are JSON numbers (Money.value): kept as sent.
  exactNumbers: PRICE_KEYS,
  options: {
    ...ADDRESS_LISTING.options,
    addresses: { kind: 'evm_address[]', required: true, doc: 'addresses whose transfers to list; a partition per address and token type' },
    tokenTypes: { kind: 'string[]', doc: `token types to list, each its own listing (listErc20, listErc721, listErc1155): any of ${TOKEN_TYPES.join(', ')} (default all three)` },
  },
  check: (s) => {
    const out = ADDRESS_LISTING.check(s);
    ((s.tokenTypes as string[] | undefined) ?? []).forEach((t, i) => {
      if (!(TOKEN_TYPES as string[]).includes(t)) out.push([`tokenTypes[${i}]`, `${JSON.stringify(t)} is not a token type (${TOKEN_TYPES.join(', ')})`]);
    });
    return out;
  },
  partitions,
  // As in erc_transfers: an ERC-1155 batch carries several token ids under one log index. A
  // transfer of an address to itself is listed once.
  key: ['chain_id', 'address', 'token_address', 'tx_hash', 'log_index', 'token_id'],
  keyDoc: 'a transfer is listed once for each listed address it was sent from or to',
  bytesSafe: true,
  knownFields: ercTransfers.knownFields,
  columns: [
    ercTransfers.columns[0]!,
    ADDRESS_COLUMN,
    ...ercTransfers.columns.slice(1),
  ],
};
