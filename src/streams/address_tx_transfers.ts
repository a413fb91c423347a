import type { StreamDecl } from '../decl/stream.js';
import { nestedColumns, TRANSACTION_DETAILS_LISTING } from './address_transactions.js';
import { addressTokenTransfers } from './address_token_transfers.js';

/**
 * A transaction's ERC-20, ERC-721 and ERC-1155 transfers of the address, one row each, in the
 * columns of address_token_transfers: the same transfers, from one listing where that table takes
 * three (docs/services.md, Data service). token_type tells the three lists apart, as the token
 * object each transfer carries does.
 */
export const addressTxTransfers: StreamDecl = {
  ...TRANSACTION_DETAILS_LISTING,
  table: 'address_tx_transfers',
  doc: "token transfers (ERC-20, ERC-721, ERC-1155) of addresses from their full transaction listing, by block range: address_token_transfers' rows from one listing",
  explode: ['erc20Transfers', 'erc721Transfers', 'erc1155Transfers'],
  exactNumbers: addressTokenTransfers.exactNumbers,
  options: {
    ...TRANSACTION_DETAILS_LISTING.options,
    addresses: { kind: 'evm_address[]', required: true, doc: 'addresses whose transactions to list; one partition each' },
  },
  key: addressTokenTransfers.key,
  keyDoc: addressTokenTransfers.keyDoc,
  bytesSafe: true,
  knownFields: addressTokenTransfers.knownFields,
  columns: nestedColumns(addressTokenTransfers.columns),
};
