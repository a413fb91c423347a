import type { StreamDecl } from '../decl/stream.js';
import { feeColumns } from './evm_config.js';
import { BLOCKCHAIN_IDS_OPTION, CHAIN_SNAPSHOT, CHAIN_SNAPSHOT_COLUMNS, call, chainSnapshot, fields, rpcPath } from './node_reads.js';

const feeConfigPage = chainSnapshot(async (x, chain) => {
  const block = x.config.block as string | undefined;
  return [fields(await call(x, rpcPath(chain), 'eth_feeConfig', block === undefined ? [] : [block]), 'eth_feeConfig')];
});

export const feeConfig: StreamDecl = {
  table: 'fee_config',
  doc: 'the fee config in force on EVM subnet chains (eth_feeConfig) and the block it last changed at, one row per chain per snapshot',
  ...CHAIN_SNAPSHOT,
  endpoint: '/ext/bc/{chain}/rpc',
  methods: ['eth_feeConfig'],
  items: 'feeConfig',
  extract: feeConfigPage,
  options: {
    blockchainIds: BLOCKCHAIN_IDS_OPTION,
    block: { kind: 'evm_block', doc: 'the block to ask at: a number in hex (0x...), a hash or latest (default latest)' },
  },
  key: ['node_url', 'snapshot_at', 'blockchain_id'],
  columns: [
    ...CHAIN_SNAPSHOT_COLUMNS,
    ...feeColumns((r, field) => (r.feeConfig as Record<string, unknown> | undefined)?.[field], '', 'feeConfig.'),
    { name: 'last_changed_at', type: 'bigint', from: 'lastChangedAt', required: true, doc: 'block the fee config last changed at (0: the genesis)' },
    { name: 'fee_config', type: 'json', from: 'feeConfig', required: true, doc: 'the fee config whole' },
  ],
};
