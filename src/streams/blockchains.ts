import type { Column, StreamDecl } from './types.js';
import { NETWORK_COLUMN } from './common.js';
import { SUBNETS_LISTING } from './subnets.js';

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
  let v: unknown = genesis(b)?.config;
  for (const k of path.split('.')) v = v !== null && typeof v === 'object' ? (v as Item)[k] : undefined;
  return v;
}

const FEE_FIELDS: Array<[string, string, string]> = [
  ['fee_gas_limit', 'gasLimit', 'block gas limit'],
  ['fee_target_block_rate', 'targetBlockRate', 'target seconds between blocks'],
  ['fee_min_base_fee', 'minBaseFee', 'minimum base fee, in wei'],
  ['fee_target_gas', 'targetGas', 'gas targeted per targetBlockRate window'],
  ['fee_base_fee_change_denominator', 'baseFeeChangeDenominator', 'how fast the base fee moves'],
  ['fee_min_block_gas_cost', 'minBlockGasCost', 'minimum block gas cost'],
  ['fee_max_block_gas_cost', 'maxBlockGasCost', 'maximum block gas cost'],
  ['fee_block_gas_cost_step', 'blockGasCostStep', 'block gas cost step'],
];

/** Precompile configs of subnet-EVM genesis: config key -> column prefix. */
const PRECOMPILES: Array<[string, string]> = [
  ['txAllowListConfig', 'tx_allow_list'],
  ['contractDeployerAllowListConfig', 'contract_deployer_allow_list'],
  ['contractNativeMinterConfig', 'contract_native_minter'],
  ['feeManagerConfig', 'fee_manager'],
  ['rewardManagerConfig', 'reward_manager'],
];

/** Lowercased EVM addresses; anything but a list of strings is passed on to be rejected. */
function lowered(v: unknown): unknown {
  return Array.isArray(v) && v.every((a) => typeof a === 'string') ? v.map((a: string) => a.toLowerCase()) : v;
}

const GENESIS_COLUMNS: Column[] = [
  { name: 'genesis_data', type: 'json', derive: genesis, doc: 'EVM genesis, whole (sent as an object or as JSON text)' },
  { name: 'genesis_data_text', type: 'varchar', derive: (b) => (typeof b.genesisData === 'string' && !genesis(b) ? b.genesisData : undefined), doc: 'genesis as sent when it is not JSON (other VMs send encoded bytes)' },
  { name: 'genesis_chain_id', type: 'bigint', derive: (b) => configAt(b, 'chainId'), doc: 'config.chainId of the genesis' },
  ...FEE_FIELDS.map(([name, field, doc]): Column => ({ name, type: 'bigint', derive: (b) => configAt(b, `feeConfig.${field}`), doc: `feeConfig.${field}: ${doc}` })),
  { name: 'allow_fee_recipients', type: 'boolean', derive: (b) => configAt(b, 'allowFeeRecipients'), doc: 'validators may name their fee recipient' },
  { name: 'warp_quorum_numerator', type: 'integer', derive: (b) => configAt(b, 'warpConfig.quorumNumerator'), doc: 'warp messages: signing quorum (percent)' },
  { name: 'warp_require_primary_network_signers', type: 'boolean', derive: (b) => configAt(b, 'warpConfig.requirePrimaryNetworkSigners'), doc: 'warp messages from the primary network need its signers' },
  {
    name: 'precompiles',
    type: 'varchar[]',
    derive: (b) => (genesis(b) ? PRECOMPILES.filter(([key]) => configAt(b, key) != null).map(([key]) => key) : undefined),
    doc: 'allow-list and manager configs set in the genesis (txAllowListConfig, feeManagerConfig, ...)',
  },
  ...PRECOMPILES.map(([key, prefix]): Column => ({ name: `${prefix}_admins`, type: 'varchar[]', derive: (b) => lowered(configAt(b, `${key}.adminAddresses`)), doc: `${key}.adminAddresses, lowercased` })),
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
