// What the node suites share: the asset chain's window, the addresses and assets asked, a chain of
// a plain subnet, and a pipeline of every node table the node serves without its admin API.
import { checkPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { AVAX_ASSET_ID, NODE_DEMO, assetId, xAddress } from '../../src/simulator/node_world.js';
import type { Simulator } from '../../src/simulator/server.js';

/** The asset chain's last 26 blocks at the still world's now. */
export const WINDOW = { start: NODE_DEMO.xvmHead - 25, end: NODE_DEMO.xvmHead + 1 };
export const ADDRESSES = [xAddress(0), xAddress(1)];
export const ASSET_IDS = [AVAX_ASSET_ID, assetId(0), assetId(2)];

export function nodePipeline(url: string, streams: Array<Record<string, unknown>>, node: Record<string, unknown> = {}): Pipeline {
  return checkPipeline({ name: 'node', sources: { node: { url, ...node } }, streams }, 'node.yaml');
}

/** A subnet-EVM chain of a plain subnet (not an L1) of the simulator's world. */
export function plainSubnetChain(sim: Simulator): string {
  const n = sim.world.node;
  const id = [...sim.world.subnets('mainnet')].filter((s) => !s.isL1).flatMap((s) => s.blockchains.map((b) => b.blockchainId)).find((b) => n.evmChain(b)?.subnetEvm);
  if (!id) throw new Error('the world has no subnet-EVM chain on a plain subnet');
  return id;
}

/** Every node table but the admin API's, over the Lakeside chain, `other` and the window. */
export function nodeStreams(other: string): Array<Record<string, unknown>> {
  const { start, end } = WINDOW;
  return [
    { table: 'node_info' },
    { table: 'node_peers' },
    { table: 'node_uptime', subnetIds: [NODE_DEMO.subnetId] },
    { table: 'health_checks' },
    { table: 'subnet_validators', blockchainIds: [NODE_DEMO.evmChain, other] },
    { table: 'fee_config', blockchainIds: [NODE_DEMO.evmChain, other] },
    { table: 'chain_config', blockchainIds: [NODE_DEMO.evmChain, other, 'C'] },
    { table: 'active_rules', blockchainIds: [NODE_DEMO.evmChain] },
    { table: 'xvm_blocks', startBlock: start, endBlock: end },
    { table: 'xvm_transactions', startBlock: start, endBlock: end },
    { table: 'xvm_inputs', startBlock: start, endBlock: end },
    { table: 'xvm_outputs', startBlock: start, endBlock: end },
    { table: 'assets', assetIds: ASSET_IDS },
    { table: 'utxos', addresses: ADDRESSES, pageSize: 5 },
  ];
}
