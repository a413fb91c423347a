import type { StreamDecl } from '../decl/stream.js';
import { dig, evmConfigColumns } from './evm_config.js';
import { BLOCKCHAIN_IDS_OPTION, CHAIN_SNAPSHOT, CHAIN_SNAPSHOT_COLUMNS, call, chainSnapshot, fields, rpcPath } from './node_reads.js';

const chainConfigPage = chainSnapshot(async (x, chain) => [{ config: fields(await call(x, rpcPath(chain), 'eth_getChainConfig', []), 'eth_getChainConfig') }]);

type Item = Record<string, unknown>;
const at = (i: Item, path: string) => dig(i.config, path);

export const chainConfig: StreamDecl = {
  table: 'chain_config',
  doc: 'the chain config of EVM chains (eth_getChainConfig, with its upgrade config): whole as JSON, and its fee, precompile and upgrade settings as columns, one row per chain per snapshot',
  ...CHAIN_SNAPSHOT,
  endpoint: '/ext/bc/{chain}/rpc',
  methods: ['eth_getChainConfig'],
  items: 'config',
  extract: chainConfigPage,
  options: { blockchainIds: BLOCKCHAIN_IDS_OPTION },
  key: ['node_url', 'snapshot_at', 'blockchain_id'],
  columns: [
    ...CHAIN_SNAPSHOT_COLUMNS,
    { name: 'evm_chain_id', type: 'bigint', derive: (i) => at(i, 'chainId'), doc: 'chainId of the config' },
    { name: 'subnet_evm_timestamp', type: 'timestamptz', derive: (i) => at(i, 'subnetEVMTimestamp'), doc: 'subnet-EVM activation (UTC)' },
    { name: 'eip150_hash', type: 'varchar', derive: (i) => at(i, 'eip150Hash'), doc: 'eip150Hash' },
    ...evmConfigColumns(at, (i) => i.config !== null && typeof i.config === 'object', 'fee_', 'the config'),
    { name: 'precompile_upgrades', type: 'json', derive: (i) => at(i, 'upgrades.precompileUpgrades'), doc: 'upgrades.precompileUpgrades: precompiles enabled or disabled after genesis (blockTimestamp, adminAddresses, disable)' },
    { name: 'config', type: 'json', from: 'config', required: true, doc: 'the chain config whole (fork blocks included)' },
  ],
};
