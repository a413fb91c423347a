import type { StreamDecl } from '../decl/stream.js';
import { utxoOwners } from './platform_reads.js';
import { XCHAIN_TX_STREAM, txColumns } from './primary_xc_reads.js';

const count = (v: unknown) => (Array.isArray(v) ? v.length : undefined);

export const xchainTransactions: StreamDecl = {
  table: 'xchain_transactions',
  doc: 'transactions of the X-Chain by address, by time, as the data service indexes them (xvm_transactions: the same chain by block, from a node)',
  ...XCHAIN_TX_STREAM,
  key: ['network', 'tx_hash'],
  keyDoc: 'network included, as fuji and testnet name the same network',
  knownFields: ['consumedUtxos', 'emittedUtxos', 'amountUnlocked', 'amountCreated'],
  columns: [
    ...txColumns('xchain_transactions'),
    { name: 'chain_format', type: 'varchar', from: 'chainFormat', doc: 'linear (in a block, since Cortina) or non-linear (in vertices, before)' },
    { name: 'addresses', type: 'varchar[]', derive: utxoOwners, doc: 'owners of the UTXOs it consumes and emits, once each, sorted (bech32 as sent)' },
    { name: 'input_count', type: 'integer', derive: (t) => count(t.consumedUtxos), doc: 'UTXOs it consumes (rows of xchain_inputs)' },
    { name: 'output_count', type: 'integer', derive: (t) => count(t.emittedUtxos), doc: 'UTXOs it emits (rows of xchain_outputs)' },
    { name: 'created_asset_id', type: 'varchar', from: 'assetCreated.assetId', doc: 'CreateAssetTx: the new asset' },
    { name: 'created_asset_name', type: 'varchar', from: 'assetCreated.name', doc: 'its name' },
    { name: 'created_asset_symbol', type: 'varchar', from: 'assetCreated.symbol', doc: 'its symbol' },
    { name: 'created_asset_denomination', type: 'integer', from: 'assetCreated.denomination', doc: 'its decimals' },
    { name: 'created_asset_type', type: 'varchar', from: 'assetCreated.type', doc: 'secp256k1 or nft' },
    { name: 'created_asset_cap', type: 'varchar', from: 'assetCreated.cap', doc: 'fixed or variable supply' },
    { name: 'created_asset_timestamp', type: 'timestamptz', from: 'assetCreated.createdAtTimestamp', doc: 'when it was created (UTC)' },
    { name: 'vertices', type: 'json', from: 'vertices', doc: 'non-linear transactions: the vertices that accepted it ({hash, height, timestamp})' },
  ],
};
