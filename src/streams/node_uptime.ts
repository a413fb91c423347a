import { createHash } from 'node:crypto';
import type { ClientPort, Page } from '../decl/request.js';
import { Skipped } from '../errors.js';
import { cb58Encode } from '../ids.js';
import { RpcError } from '../sources/jsonrpc.js';
import type { ExtractContext, StreamDecl } from '../decl/stream.js';
import { NODE_SNAPSHOT, NODE_SNAPSHOT_COLUMNS, SNAPSHOT_KEY_DOC, call, fields, nodeSnapshot, stamped } from './node_reads.js';

/** info.uptime without a subnet is of the primary network, named by its subnet id here. */
export const PRIMARY_NETWORK_ID = '11111111111111111111111111111111LpoYY';

/** A subnet id no node tracks: a node that answers info.uptime for it does not read subnetID. */
export const UNTRACKED_SUBNET_ID = cb58Encode(createHash('sha256').update('chainlake: a subnet no node tracks').digest());

/** Whether each node client of a run reads info.uptime's subnetID, once asked. */
const readsSubnet = new WeakMap<ClientPort, Promise<boolean>>();

/**
 * Since v1.11.12 AvalancheGo's info.uptime takes no arguments: a subnetID is ignored and the
 * answer is the primary network's. A node before that answers for the subnets it tracks and
 * refuses the others, so asking for a subnet no node tracks tells the two apart.
 */
function readsSubnetId(x: ExtractContext): Promise<boolean> {
  let known = readsSubnet.get(x.client);
  if (!known) {
    known = call(x, '/ext/info', 'info.uptime', { subnetID: UNTRACKED_SUBNET_ID }).then(
      () => false,
      (err: unknown) => {
        if (err instanceof RpcError) return true;
        throw err;
      },
    );
    // A transport failure decides nothing: the next partition asks again.
    known.catch(() => readsSubnet.delete(x.client));
    readsSubnet.set(x.client, known);
  }
  return known;
}

async function* uptimePage(x: ExtractContext): AsyncGenerator<Page> {
  const snap = nodeSnapshot(x);
  const subnetID = x.partition.path.subnet!;
  const primary = subnetID === PRIMARY_NETWORK_ID;
  if (!primary && !(await readsSubnetId(x))) {
    throw new Skipped(`the node ignores info.uptime's subnetID (AvalancheGo v1.11.12 and later) and answers with the primary network's figures, which are not this subnet's: no row`);
  }
  const r = fields(await call(x, '/ext/info', 'info.uptime', primary ? {} : { subnetID }), 'info.uptime');
  yield { items: stamped([{ ...r, subnetID }], snap) };
}

export const nodeUptime: StreamDecl = {
  table: 'node_uptime',
  doc: "the node's uptime as its peers observe it (info.uptime), for the primary network and each listed subnet the node answers for, one row per subnet per snapshot",
  ...NODE_SNAPSHOT,
  endpoint: '/ext/info',
  methods: ['info.uptime'],
  items: 'uptime',
  extract: uptimePage,
  options: {
    subnetIds: {
      kind: 'cb58_id[]',
      doc: 'subnets (besides the primary network, always asked) to ask the uptime of; one partition each. A node that ignores the subnet (AvalancheGo v1.11.12 and later) lands no row for it: the run report says so',
    },
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
