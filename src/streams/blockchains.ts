import type { Column, StreamDecl } from '../decl/stream.js';
import { NETWORK_COLUMN } from './common.js';
import { SUBNETS_LISTING } from './subnets.js';
import { dig, evmConfigColumns } from './evm_config.js';

type Item = Record<string, unknown>;

const parsed = new WeakMap<Item, Item | undefined>();

/** genesisData as an object, whether it came as one or as JSON text (both are served). */
function genesis(b: Item): Item | undefined {
  if (parsed.has(b)) return parsed.get(b);
  const g = b.genesisData;
  let out: Item | undefined;
  if (g !== null && typeof g === 'object' && !Array.isArray(g)) out = g as Item;
  else if (typeof g === 'string') {
    try {
      const p: unknown = JSON.parse(g);
      if (p !== null && typeof p === 'object' && !Array.isArray(p)) out = p as Item;
    } catch {
      // Not JSON: another VM's encoded genesis, kept in genesis_data_text.
    }
  }
  parsed.set(b, out);
  return out;
}

function configAt(b: Item, path: string): unknown {
  return dig(genesis(b)?.config, path);
}

const GENESIS_COLUMNS: Column[] = [
  { name: 'genesis_data', type: 'json', derive: genesis, doc: 'EVM genesis, whole (sent as an object or as JSON text)' },
  { name: 'genesis_data_text', type: 'varchar', derive: (b) => (typeof b.genesisData === 'string' && !genesis(b) ? b.genesisData : undefined), doc: 'genesis as sent when it is not JSON (other VMs send encoded bytes)' },
  { name: 'genesis_chain_id', type: 'bigint', derive: (b) => configAt(b, 'chainId'), doc: 'config.chainId of the genesis' },
  ...evmConfigColumns(configAt, (b) => genesis(b) !== undefined, 'fee_', 'the genesis'),
];

export const blockchains: StreamDecl = {
  table: 'blockchains',
  doc: "blockchains of a network's subnets (dimension), with their genesis whole and its fee and precompile settings as columns",
  ...SUBNETS_LISTING,
  explode: 'blockchains',
  key: ['network', 'blockchain_id'],
  keyDoc: 'network included, as fuji and testnet name the same network',
  knownFields: ['genesisData'],
  columns: [
    NETWORK_COLUMN,
    { name: 'blockchain_id', type: 'varchar', from: 'blockchainId', required: true, doc: 'blockchain id (cb58)' },
    { name: 'subnet_id', type: 'varchar', from: ['subnetId', '_parent.subnetId'], required: true, doc: 'its subnet' },
    { name: 'blockchain_name', type: 'varchar', from: 'blockchainName', doc: 'name' },
    { name: 'vm_id', type: 'varchar', from: 'vmId', doc: 'virtual machine id' },
    { name: 'evm_chain_id', type: 'bigint', from: 'evmChainId', doc: 'EVM chain id (EVM chains)' },
    { name: 'create_block_timestamp', type: 'timestamptz', from: 'createBlockTimestamp', doc: 'time of the P-Chain block that created it (UTC)' },
    { name: 'create_block_number', type: 'bigint', from: 'createBlockNumber', doc: 'height of that P-Chain block' },
    { name: 'subnet_is_l1', type: 'boolean', from: '_parent.isL1', doc: 'its subnet is an L1' },
    ...GENESIS_COLUMNS,
  ],
};
