// The settings of an EVM chain config (subnet-EVM) as columns: its fee config, fee recipients,
// warp and the allow-list and manager precompiles. A genesis (blockchains) and a node's
// eth_getChainConfig (chain_config) carry the same config.
import type { Column } from '../decl/stream.js';

type Item = Record<string, unknown>;

/** The value at a dot path (`feeConfig.gasLimit`) under `root`. */
export function dig(root: unknown, path: string): unknown {
  let v = root;
  for (const k of path.split('.')) v = v !== null && typeof v === 'object' ? (v as Item)[k] : undefined;
  return v;
}

/** Reads a dot path of the config of an item. */
export type ConfigReader = (item: Item, path: string) => unknown;

/** Fee config fields: column suffix, field, meaning. */
export const FEE_FIELDS: Array<[string, string, string]> = [
  ['gas_limit', 'gasLimit', 'block gas limit'],
  ['target_block_rate', 'targetBlockRate', 'target seconds between blocks'],
  ['min_base_fee', 'minBaseFee', 'minimum base fee, in wei'],
  ['target_gas', 'targetGas', 'gas targeted per targetBlockRate window'],
  ['base_fee_change_denominator', 'baseFeeChangeDenominator', 'how fast the base fee moves'],
  ['min_block_gas_cost', 'minBlockGasCost', 'minimum block gas cost'],
  ['max_block_gas_cost', 'maxBlockGasCost', 'maximum block gas cost'],
  ['block_gas_cost_step', 'blockGasCostStep', 'block gas cost step'],
];

/** Fee config columns named `<prefix><suffix>`, read from `feeConfig.` + field by `at`. */
export function feeColumns(at: (item: Item, field: string) => unknown, prefix: string, where: string): Column[] {
  return FEE_FIELDS.map(([suffix, field, doc]): Column => ({ name: `${prefix}${suffix}`, type: 'bigint', derive: (b) => at(b, field), doc: `${where}${field}: ${doc}` }));
}

/** Precompile configs of subnet-EVM: config key -> column prefix. */
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

/**
 * Columns of the config `at` reads; `present` says whether the item has a config at all (without
 * one, the precompile list is NULL rather than empty). `of` names the config in the docs.
 */
export function evmConfigColumns(at: ConfigReader, present: (item: Item) => boolean, feePrefix: string, of: string): Column[] {
  return [
    ...feeColumns((b, field) => at(b, `feeConfig.${field}`), feePrefix, 'feeConfig.'),
    { name: 'allow_fee_recipients', type: 'boolean', derive: (b) => at(b, 'allowFeeRecipients'), doc: 'validators may name their fee recipient' },
    { name: 'warp_quorum_numerator', type: 'integer', derive: (b) => at(b, 'warpConfig.quorumNumerator'), doc: 'warp messages: signing quorum (percent)' },
    { name: 'warp_require_primary_network_signers', type: 'boolean', derive: (b) => at(b, 'warpConfig.requirePrimaryNetworkSigners'), doc: 'warp messages from the primary network need its signers' },
    {
      name: 'precompiles',
      type: 'varchar[]',
      derive: (b) => (present(b) ? PRECOMPILES.filter(([key]) => at(b, key) != null).map(([key]) => key) : undefined),
      doc: `allow-list and manager configs set in ${of} (txAllowListConfig, feeManagerConfig, ...)`,
    },
    ...PRECOMPILES.map(([key, prefix]): Column => ({ name: `${prefix}_admins`, type: 'varchar[]', derive: (b) => lowered(at(b, `${key}.adminAddresses`)), doc: `${key}.adminAddresses, lowercased` })),
  ];
}
