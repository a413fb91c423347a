import type { Page } from '../decl/request.js';
import { RpcError } from '../sources/jsonrpc.js';
import type { ExtractContext, StreamDecl } from '../decl/stream.js';
import { NODE_SNAPSHOT, NODE_SNAPSHOT_COLUMNS, SNAPSHOT_KEY_DOC, call, fields, nodePartition, nodeSnapshot, stamped } from './node_reads.js';

const INFO = '/ext/info';
const CHAINS = ['P', 'X', 'C'] as const;

/**
 * The node's identity, version, fees, upgrade schedule, proposal votes and bootstrapping, one
 * row per snapshot. getNodeID is node-specific: the public server answers it with an error, which
 * lands as NULL with the error's text, not as a failure.
 */
async function* infoPage(x: ExtractContext): AsyncGenerator<Page> {
  const snap = nodeSnapshot(x);
  const get = (method: string, params: unknown = {}) => call(x, INFO, method, params).then((r) => fields(r, method));
  const nodeId = get('info.getNodeID').then(
    (r) => ({ nodeID: r.nodeID, nodePOP: r.nodePOP }),
    (err: unknown) => {
      if (err instanceof RpcError) return { nodeIdError: err.message };
      throw err;
    },
  );
  const [version, networkId, networkName, id, txFee, upgrades, acps, ...bootstrapped] = await Promise.all([
    get('info.getNodeVersion'),
    get('info.getNetworkID'),
    get('info.getNetworkName'),
    nodeId,
    get('info.getTxFee'),
    get('info.upgrades'),
    get('info.acps'),
    ...CHAINS.map((chain) => get('info.isBootstrapped', { chain })),
  ]);
  const item = {
    ...version,
    networkID: networkId.networkID,
    networkName: networkName.networkName,
    ...id,
    txFees: txFee,
    upgrades,
    acps: acps.acps,
    bootstrapped: Object.fromEntries(CHAINS.map((c, i) => [c, bootstrapped[i]!.isBootstrapped])),
  };
  yield { items: stamped([item], snap) };
}

export const nodeInfo: StreamDecl = {
  table: 'node_info',
  doc: "the node's identity, version, network, fees, upgrade schedule, ACP votes and bootstrapping (P, X, C), one row per snapshot",
  ...NODE_SNAPSHOT,
  endpoint: INFO,
  methods: ['info.getNodeVersion', 'info.getNetworkID', 'info.getNetworkName', 'info.getNodeID', 'info.getTxFee', 'info.upgrades', 'info.acps', 'info.isBootstrapped'],
  items: 'info',
  extract: infoPage,
  options: {},
  partitions: () => nodePartition('info'),
  key: ['node_url', 'snapshot_at'],
  keyDoc: SNAPSHOT_KEY_DOC,
  columns: [
    ...NODE_SNAPSHOT_COLUMNS,
    { name: 'node_id', type: 'varchar', from: 'nodeID', doc: 'NodeID of the node (NULL where the node does not tell: the public server)' },
    { name: 'node_id_error', type: 'varchar', from: 'nodeIdError', doc: 'why node_id is NULL: the JSON-RPC error of info.getNodeID' },
    { name: 'bls_public_key', type: 'varchar', from: 'nodePOP.publicKey', doc: 'BLS public key (48-byte hex) of the proof of possession' },
    { name: 'bls_proof_of_possession', type: 'varchar', from: 'nodePOP.proofOfPossession', doc: 'BLS signature (96-byte hex) proving the key' },
    { name: 'network_id', type: 'integer', from: 'networkID', required: true, doc: 'network id (1 mainnet, 5 the test network)' },
    { name: 'network_name', type: 'varchar', from: 'networkName', required: true, doc: 'network name' },
    { name: 'version', type: 'varchar', from: 'version', required: true, doc: 'node version (avalanchego/1.13.0)' },
    { name: 'database_version', type: 'varchar', from: 'databaseVersion', doc: 'database version' },
    { name: 'git_commit', type: 'varchar', from: 'gitCommit', doc: 'git commit of the build' },
    { name: 'rpc_protocol_version', type: 'varchar', from: 'rpcProtocolVersion', doc: 'RPC chain-VM protocol version' },
    { name: 'vm_versions', type: 'json', from: 'vmVersions', doc: 'VM name -> version' },
    { name: 'tx_fee', type: 'amount', from: 'txFees.txFee', doc: 'transaction fee, nano units (info.getTxFee)' },
    { name: 'create_asset_tx_fee', type: 'amount', from: 'txFees.createAssetTxFee', doc: 'fee to create an asset, nano units' },
    { name: 'tx_fees', type: 'json', from: 'txFees', doc: 'info.getTxFee whole (the other fees are deprecated since v1.12.2 and no longer used)' },
    { name: 'upgrades', type: 'json', from: 'upgrades', doc: 'upgrade schedule (info.upgrades): activation times; a time far ahead is not scheduled yet' },
    { name: 'acps', type: 'json', from: 'acps', doc: 'proposal number -> support, object and abstain weights (exact digits) and supporters, objectors (info.acps)' },
    { name: 'bootstrapped_p', type: 'boolean', from: 'bootstrapped.P', required: true, doc: 'the P-Chain is bootstrapped' },
    { name: 'bootstrapped_x', type: 'boolean', from: 'bootstrapped.X', required: true, doc: 'the X-Chain is bootstrapped' },
    { name: 'bootstrapped_c', type: 'boolean', from: 'bootstrapped.C', required: true, doc: 'the C-Chain is bootstrapped' },
  ],
};
