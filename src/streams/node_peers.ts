import type { Page } from '../decl/request.js';
import { RunError } from '../errors.js';
import type { ExtractContext, StreamDecl } from '../decl/stream.js';
import { NODE_SNAPSHOT, NODE_SNAPSHOT_COLUMNS, SNAPSHOT_KEY_DOC, call, fields, nodePartition, nodeSnapshot, stamped, timeColumn } from './node_reads.js';

async function* peersPage(x: ExtractContext): AsyncGenerator<Page> {
  const snap = nodeSnapshot(x);
  const nodeIDs = (x.config.nodeIds as string[] | undefined) ?? [];
  const r = fields(await call(x, '/ext/info', 'info.peers', { nodeIDs }), 'info.peers');
  if (!Array.isArray(r.peers)) throw new RunError('info.peers: the answer has no peers list');
  yield { items: stamped(r.peers, snap) };
}

export const nodePeers: StreamDecl = {
  table: 'node_peers',
  doc: 'the peers the node is connected to (info.peers), one row per peer per snapshot',
  ...NODE_SNAPSHOT,
  endpoint: '/ext/info',
  methods: ['info.peers'],
  items: 'peers',
  extract: peersPage,
  options: {
    nodeIds: { kind: 'node_id[]', doc: 'only these peers (default all; a peer not connected is left out by the node)' },
  },
  partitions: () => nodePartition('peers'),
  key: ['node_url', 'snapshot_at', 'node_id'],
  keyDoc: SNAPSHOT_KEY_DOC,
  knownFields: ['lastSent', 'lastReceived'],
  columns: [
    ...NODE_SNAPSHOT_COLUMNS,
    { name: 'node_id', type: 'varchar', from: 'nodeID', required: true, doc: "the peer's NodeID" },
    { name: 'ip', type: 'varchar', from: 'ip', doc: 'address the connection is with (ip:port)' },
    { name: 'public_ip', type: 'varchar', from: 'publicIP', doc: 'address the peer announces (ip:port)' },
    { name: 'version', type: 'varchar', from: 'version', doc: "the peer's node version" },
    timeColumn('last_sent', 'lastSent', 'last message sent to the peer'),
    timeColumn('last_received', 'lastReceived', 'last message received from the peer'),
    { name: 'benched', type: 'varchar[]', from: 'benched', doc: 'chains the peer is benched on' },
    { name: 'observed_uptime', type: 'integer', from: 'observedUptime', doc: "this node's primary-network uptime as the peer observes it (percent)" },
    { name: 'tracked_subnets', type: 'varchar[]', from: 'trackedSubnets', doc: 'subnets the peer tracks' },
    { name: 'upgrade_time', type: 'timestamptz', from: 'upgradeTime', doc: 'the next network upgrade as the peer announced it in its handshake (UTC)' },
    { name: 'supported_acps', type: 'integer[]', from: 'supportedACPs', doc: 'proposals (ACP numbers) the peer supports' },
    { name: 'objected_acps', type: 'integer[]', from: 'objectedACPs', doc: 'proposals (ACP numbers) the peer objects to' },
  ],
};
