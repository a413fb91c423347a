import { RunError } from '../errors.js';
import type { StreamDecl } from '../decl/stream.js';
import { BLOCKCHAIN_IDS_OPTION, CHAIN_SNAPSHOT, CHAIN_SNAPSHOT_COLUMNS, call, chainSnapshot, fields } from './node_reads.js';

const validatorsPage = chainSnapshot(async (x, chain) => {
  const nodeIDs = x.config.nodeIds as string[] | undefined;
  const method = 'validators.getCurrentValidators';
  const r = fields(await call(x, `/ext/bc/${encodeURIComponent(chain)}/validators`, method, nodeIDs ? { nodeIDs } : {}), method);
  if (!Array.isArray(r.validators)) throw new RunError(`${method}: the answer has no validators list`);
  return r.validators;
});

export const subnetValidators: StreamDecl = {
  table: 'subnet_validators',
  doc: 'the current validators of EVM subnet chains (validators.getCurrentValidators), one row per validator per snapshot',
  ...CHAIN_SNAPSHOT,
  endpoint: '/ext/bc/{chain}/validators',
  methods: ['validators.getCurrentValidators'],
  items: 'validators',
  extract: validatorsPage,
  options: {
    blockchainIds: BLOCKCHAIN_IDS_OPTION,
    nodeIds: { kind: 'node_id[]', doc: 'only these validators (default all)' },
  },
  key: ['node_url', 'snapshot_at', 'blockchain_id', 'node_id'],
  columns: [
    ...CHAIN_SNAPSHOT_COLUMNS,
    { name: 'node_id', type: 'varchar', from: 'nodeID', required: true, doc: 'NodeID of the validator' },
    { name: 'validation_id', type: 'varchar', from: 'validationID', doc: 'validation id (L1), or the add-subnet-validator transaction (subnets)' },
    { name: 'weight', type: 'amount', from: 'weight', required: true, doc: 'weight (uint64)' },
    { name: 'start_timestamp', type: 'timestamptz', from: 'startTimestamp', doc: 'start of the validation (UTC)' },
    { name: 'is_active', type: 'boolean', from: 'isActive', doc: 'an L1 validator whose continuous fees are paid on the P-Chain (always true for subnet validators)' },
    { name: 'is_l1_validator', type: 'boolean', from: 'isL1Validator', doc: 'an L1 validator' },
    { name: 'is_connected', type: 'boolean', from: 'isConnected', doc: 'connected to the node asked' },
    { name: 'uptime_seconds', type: 'bigint', from: 'uptimeSeconds', doc: 'uptime the node observed, seconds' },
    { name: 'uptime_percentage', type: 'double', from: 'uptimePercentage', doc: 'uptime the node observed, percent' },
  ],
};
