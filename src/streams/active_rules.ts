import { RunError } from '../errors.js';
import type { StreamDecl } from '../decl/stream.js';
import { BLOCKCHAIN_IDS_OPTION, CHAIN_SNAPSHOT, CHAIN_SNAPSHOT_COLUMNS, call, chainSnapshot, fields, rpcPath } from './node_reads.js';

/**
 * One row per rule: the answer's maps of rule -> boolean (ethRules, avalancheRules) and of
 * precompile -> config (precompiles, active when listed) in one long shape, so a rule a newer
 * node adds is a new row rather than a new column. ethRules also holds the chain's id
 * (`"ChainID": 43114`, the Go struct's *big.Int): a column of every row, not a rule.
 */
const rulesPage = chainSnapshot(async (x, chain) => {
  const at = x.config.timestamp as number | undefined;
  const r = fields(await call(x, rpcPath(chain), 'eth_getActiveRulesAt', at === undefined ? [] : [at]), 'eth_getActiveRulesAt');
  const map = (k: string) => {
    const m = r[k] ?? {};
    if (m === null || typeof m !== 'object' || Array.isArray(m)) throw new RunError(`eth_getActiveRulesAt: ${k} is not a map`);
    return Object.entries(m as Record<string, unknown>);
  };
  const eth = map('ethRules');
  const chainId = eth.find(([rule]) => rule === 'ChainID')?.[1];
  return [
    ...eth.filter(([rule]) => rule !== 'ChainID').map(([rule, active]) => ({ kind: 'eth', rule, active })),
    ...map('avalancheRules').map(([rule, active]) => ({ kind: 'avalanche', rule, active })),
    ...map('precompiles').map(([rule, config]) => ({ kind: 'precompile', rule, active: true, config })),
  ].map((i) => ({ ...i, askedAt: at, chainId }));
});

export const activeRules: StreamDecl = {
  table: 'active_rules',
  doc: 'the rules and precompiles active on EVM chains (eth_getActiveRulesAt), one row per rule per chain per snapshot',
  ...CHAIN_SNAPSHOT,
  endpoint: '/ext/bc/{chain}/rpc',
  methods: ['eth_getActiveRulesAt'],
  items: 'rules',
  extract: rulesPage,
  options: {
    blockchainIds: BLOCKCHAIN_IDS_OPTION,
    timestamp: { kind: 'unix_seconds', doc: 'the time to ask at (default the latest block time)' },
  },
  key: ['node_url', 'snapshot_at', 'blockchain_id', 'kind', 'rule'],
  columns: [
    ...CHAIN_SNAPSHOT_COLUMNS,
    { name: 'asked_at', type: 'timestamptz', from: 'askedAt', doc: 'the time asked for (NULL: the latest block time)' },
    { name: 'evm_chain_id', type: 'bigint', from: 'chainId', doc: "the chain's EVM chain id (ethRules.ChainID)" },
    { name: 'kind', type: 'varchar', from: 'kind', required: true, doc: 'eth (ethRules), avalanche (avalancheRules) or precompile' },
    { name: 'rule', type: 'varchar', from: 'rule', required: true, doc: 'IsCancun, IsDurango, ..., or the precompile config name' },
    { name: 'active', type: 'boolean', from: 'active', required: true, doc: 'the rule is in force (a listed precompile is)' },
    { name: 'activated_at', type: 'timestamptz', from: 'config.timestamp', doc: 'precompiles: activation time (UTC)' },
    { name: 'precompile_config', type: 'json', from: 'config', doc: 'precompiles: the config as sent' },
  ],
};
