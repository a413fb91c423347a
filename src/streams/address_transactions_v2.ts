import type { Column, StreamDecl } from '../decl/stream.js';
import { ADDRESS_COLUMN, addressPartitions, TRANSACTION_DETAILS_LISTING } from './address_transactions.js';
import { blockTransactions } from './block_transactions.js';
import { CHAIN_ID_COLUMN } from './common.js';

const count = (list: string) => (item: Record<string, unknown>) => (Array.isArray(item[list]) ? item[list].length : 0);

/** ERC-20 transfers of the transaction whose token the service rates `reputation`. */
const rated = (reputation: string) => (item: Record<string, unknown>) =>
  Array.isArray(item.erc20Transfers) ? item.erc20Transfers.filter((t) => (t as { erc20Token?: { tokenReputation?: unknown } } | null)?.erc20Token?.tokenReputation === reputation).length : 0;

/**
 * The v2 listing of an address's transactions: v1's (address_tx_transfers, address_tx_internals
 * land its nested lists), its ERC-20 tokens rated by reputation, spam filtered out when asked. A
 * row is a transaction: the native transaction's columns, and how many items of each list it
 * holds for the address. Asked newest first, as v1 (docs/services.md, Data service): a run's block
 * ranges are split, resumed and committed from the newest block down, so an oldest-first listing
 * could not be landed exactly and `sortOrder: asc` is refused rather than served in another order.
 */
export const addressTransactionsV2: StreamDecl = {
  ...TRANSACTION_DETAILS_LISTING,
  table: 'address_transactions_v2',
  doc: "transactions of addresses from the v2 listing (spam tokens filtered when asked): each transaction with its counts of the address's token transfers and internal calls, by block range",
  endpoint: '/v2/chains/{chainId}/addresses/{address}/transactions',
  options: {
    ...TRANSACTION_DETAILS_LISTING.options,
    filterSpamTokens: { kind: 'boolean', doc: 'leave out the transfers of tokens the service rates malicious (default false: every transfer, counted in malicious_erc20_transfers)' },
    sortOrder: { kind: 'enum', values: ['asc', 'desc'], doc: 'desc (the default, and the only order landed): transactions are fetched newest first' },
  },
  check: (s) => [
    ...TRANSACTION_DETAILS_LISTING.check(s),
    ...(s.sortOrder === 'asc'
      ? [['sortOrder', 'asc is not supported: the listing is fetched and resumed newest first within each block range (a run commits from the newest block down), so an oldest-first listing could not be landed exactly; leave sortOrder out, the rows are the same'] as [string, string]]
      : []),
  ],
  partitions: (s) => {
    const filter = s.filterSpamTokens === true;
    return addressPartitions(s).map((p) => ({
      ...p,
      id: filter ? `${p.id}/spam_filtered` : p.id,
      query: { sortOrder: 'desc', ...(filter ? { filterSpamTokens: 'true' } : {}) },
      values: { ...p.values, listing: filter ? 'spam_filtered' : 'all' },
    }));
  },
  key: ['chain_id', 'address', 'listing', 'tx_hash'],
  keyDoc: 'a transaction is listed once for each listed address it concerns, and once more for a listing filtered of spam',
  knownFields: ['erc20Transfers', 'erc721Transfers', 'erc1155Transfers', 'internalTransactions', 'nativeTransaction.chainId'],
  columns: [
    CHAIN_ID_COLUMN,
    ADDRESS_COLUMN,
    { name: 'listing', type: 'varchar', partition: 'listing', doc: "'all', or 'spam_filtered' for an entry with filterSpamTokens" },
    ...blockTransactions.columns.filter((c) => c.name !== 'chain_id').map((c): Column => ({
      ...c,
      ...(typeof c.from === 'string' ? { from: `nativeTransaction.${c.from}` } : Array.isArray(c.from) ? { from: c.from.map((f) => `nativeTransaction.${f}`) } : {}),
    })),
    { name: 'erc20_transfers', type: 'integer', derive: count('erc20Transfers'), doc: "the address's ERC-20 transfers in the transaction (as listed: spam left out when filtered)" },
    { name: 'malicious_erc20_transfers', type: 'integer', derive: rated('Malicious'), doc: 'of them, of tokens the service rates Malicious (C-Chain tokens only are rated)' },
    { name: 'erc721_transfers', type: 'integer', derive: count('erc721Transfers'), doc: "the address's ERC-721 transfers in the transaction" },
    { name: 'erc1155_transfers', type: 'integer', derive: count('erc1155Transfers'), doc: "the address's ERC-1155 transfers in the transaction" },
    { name: 'internal_transactions', type: 'integer', derive: count('internalTransactions'), doc: "the address's internal transactions in the transaction (non-zero CALLs and CREATEs)" },
  ],
};
