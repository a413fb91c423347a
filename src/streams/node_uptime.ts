import type { Page } from '../decl/request.js';
import type { ExtractContext, StreamDecl } from '../decl/stream.js';
import { NODE_SNAPSHOT, NODE_SNAPSHOT_COLUMNS, SNAPSHOT_KEY_DOC, call, fields, nodeSnapshot, stamped } from './node_reads.js';

/** info.uptime without a subnet is of the primary network, named by its subnet id here. */
export const PRIMARY_NETWORK_ID = '11111111111111111111111111111111LpoYY';

async function* uptimePage(x: ExtractContext): AsyncGenerator<Page> {
  const snap = nodeSnapshot(x);
  const subnetID = x.partition.path.subnet!;
  const r = fields(await call(x, '/ext/info', 'info.uptime', subnetID === PRIMARY_NETWORK_ID ? {} : { subnetID }), 'info.uptime');
  yield { items: stamped([{ ...r, subnetID }], snap) };
}

export const nodeUptime: StreamDecl = {
  table: 'node_uptime',
  doc: "the node's uptime as its peers observe it (info.uptime), for the primary network and each listed subnet, one row per subnet per snapshot",
  ...NODE_SNAPSHOT,
  endpoint: '/ext/info',
  methods: ['info.uptime'],
  items: 'uptime',
  extract: uptimePage,
  options: {
    subnetIds: { kind: 'cb58_id[]', doc: 'subnets (besides the primary network, always asked) to ask the uptime of; one partition each' },
  },
  partitions: (s) =>
    [PRIMARY_NETWORK_ID, ...((s.subnetIds as string[] | undefined) ?? []).filter((id) => id !== PRIMARY_NETWORK_ID)].map((subnet) => ({
      id: subnet === PRIMARY_NETWORK_ID ? 'primary' : subnet,
      path: { subnet },
      query: {},
      values: {},
    })),
  key: ['node_url', 'snapshot_at', 'subnet_id'],
  keyDoc: SNAPSHOT_KEY_DOC,
  columns: [
    ...NODE_SNAPSHOT_COLUMNS,
    { name: 'subnet_id', type: 'varchar', from: 'subnetID', required: true, doc: `subnet (${PRIMARY_NETWORK_ID}: the primary network)` },
    { name: 'rewarding_stake_percentage', type: 'double', from: 'rewardingStakePercentage', required: true, doc: 'percent of stake that sees this node above the uptime requirement' },
    { name: 'weighted_average_percentage', type: 'double', from: 'weightedAveragePercentage', required: true, doc: 'stake-weighted average of the uptimes peers observe' },
  ],
};
