import type { StreamDecl } from '../decl/stream.js';
import { ADDRESS_COLUMN, nestedColumns, TRANSACTION_DETAILS_LISTING } from './address_transactions.js';
import { internalTransactions } from './internal_transactions.js';

/**
 * A transaction's internal transactions of the address, one row each, in the columns of
 * internal_transactions: the same calls with the same derived ids (the id hashes the transaction's
 * hash and block, read from the transaction here), from the listing that also gives the transfers.
 */
export const addressTxInternals: StreamDecl = {
  ...TRANSACTION_DETAILS_LISTING,
  table: 'address_tx_internals',
  doc: "internal transactions of addresses from their full transaction listing, by block range: internal_transactions' rows, with the same ids",
  explode: 'internalTransactions',
  key: internalTransactions.key,
  keyDoc: internalTransactions.keyDoc,
  columns: nestedColumns(internalTransactions.columns.map((c) => (c.name === 'address' ? ADDRESS_COLUMN : c))),
};
