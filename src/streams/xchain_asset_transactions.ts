// An X-Chain asset's transactions (listAssetTransactions): the same transactions, in the same shape,
// as xchain_transactions lists by address, listed by the asset they move instead, one partition an
// asset, resumed by time. A row names its asset, so a transaction moving two listed assets is a
// row of each.
import type { StreamConfig, StreamDecl } from '../decl/stream.js';
import { isBlockchainId } from '../ids.js';
import { chainTxPartitions } from './platform_reads.js';
import { XCHAIN_TX_STREAM } from './primary_xc_reads.js';
import { xchainTransactions } from './xchain_transactions.js';

const { addresses: _addresses, ...TX_OPTIONS } = XCHAIN_TX_STREAM.options;

export const xchainAssetTransactions: StreamDecl = {
  ...XCHAIN_TX_STREAM,
  table: 'xchain_asset_transactions',
  doc: 'transactions of the X-Chain by asset, by time (each row as xchain_transactions has it, with the asset it was listed for)',
  endpoint: '/v1/networks/{network}/blockchains/{blockchainId}/assets/{assetId}/transactions',
  options: {
    ...TX_OPTIONS,
    assetIds: { kind: 'string[]', required: true, doc: 'X-Chain assets (cb58) whose transactions to list; one partition each (AVAX is in nearly every one: give startTimestamp)' },
  },
  check: (s: StreamConfig) => [
    ...((s.assetIds as unknown[] | undefined) ?? []).flatMap((a, i): Array<[string, string]> => (isBlockchainId(a) ? [] : [[`assetIds[${i}]`, `${JSON.stringify(a)} is not an asset id (cb58 of 32 bytes)`]])),
    ...XCHAIN_TX_STREAM.check(s),
  ],
  partitions: (s: StreamConfig) => chainTxPartitions(s, 'x-chain', [{ option: 'assetIds', query: 'assetId', name: 'asset', inPath: true }]),
  // A transaction moving two listed assets is listed under each: a row of each.
  key: ['network', 'asset_id', 'tx_hash'],
  keyDoc: 'a row is one transaction listed for one asset',
  knownFields: xchainTransactions.knownFields,
  columns: [
    xchainTransactions.columns[0]!,
    { name: 'asset_id', type: 'varchar', partition: 'assetId', doc: 'the asset it was listed for, as given in the pipeline' },
    ...xchainTransactions.columns.slice(1),
  ],
};
