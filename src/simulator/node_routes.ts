// The simulated node's routes (docs/services.md, Node JSON-RPC): JSON-RPC 2.0 over POST at
// /ext/info, /ext/health, /ext/bc/X (the asset chain, method prefix xvm), /ext/bc/{id}/rpc (EVM
// chains) and /ext/bc/{id}/validators, health over GET with 200 or 503. The same node is served
// under /public as the public server would be: node-specific methods (getNodeID, getNodeIP,
// getVMs) answer "method not available" there. The administration API is not served: chainlake
// never changes a node.
import { Reply, RpcFault, notAvailable, notFound, serverError } from './errors.js';
import {
  blockParam, encodingParam, heightParam, nodeIdsParam, paramsObject, startIndexParam, stringList, stringParam, subnetIdParam,
  unixTimeParam, utxoLimitParam, xAddressesParam,
} from './node_params.js';
import type { EvmChain, HealthKind, NodeWorld } from './node_world.js';
import type { Route, RouteContext, RouteTable } from './route.js';
import { EVM_VM_ID, SUBNET_EVM_VM_ID, X_CHAIN_ID } from './subnets.js';
import { withChecksum } from './utxo_codec.js';

type Obj = Record<string, unknown>;
type Method = (params: unknown) => unknown;

/** The JSON-RPC envelope: a result, or an error for a bad request, an unknown method or a failed one. */
export function answer(body: unknown, methods: Record<string, Method>): Obj {
  const req = (body ?? {}) as Obj;
  const id = req.id ?? null;
  const error = (code: number, message: string) => ({ jsonrpc: '2.0', id, error: { code, message } });
  if (typeof body !== 'object' || body === null || Array.isArray(body) || req.jsonrpc !== '2.0' || typeof req.method !== 'string') {
    return error(-32600, 'invalid request: expected an object with jsonrpc "2.0", id, method and params');
  }
  const method = methods[req.method];
  try {
    if (!method) throw notAvailable(req.method);
    return { jsonrpc: '2.0', id, result: method(req.params) };
  } catch (err) {
    if (err instanceof RpcFault) return error(err.code, err.message);
    throw err;
  }
}

/** A chain by alias or id, as info methods take it. */
function knownChain(node: NodeWorld, chain: string): string {
  const id = node.chainId(chain);
  if (!id) throw serverError(`there is no chain with alias/ID '${chain}'`);
  return id;
}

function infoMethods(node: NodeWorld, isPublic: boolean): Record<string, Method> {
  const local = (name: string, f: Method): Record<string, Method> => ({ [name]: isPublic ? () => { throw notAvailable(name); } : f });
  return {
    'info.getNodeVersion': () => node.nodeVersion(),
    'info.getNetworkID': () => ({ networkID: '1' }),
    'info.getNetworkName': () => ({ networkName: 'mainnet' }),
    ...local('info.getNodeID', () => ({ nodeID: node.nodeId, nodePOP: node.nodePop() })),
    ...local('info.getNodeIP', () => ({ ip: '203.0.113.7:9651' })),
    ...local('info.getVMs', () => ({ vms: { jvYyfQTxGMJLuGWa55kdP2p2zSUYsQ5Raupu4TW34ZAUBAbtq: ['avm'], [EVM_VM_ID]: ['evm'], [SUBNET_EVM_VM_ID]: ['subnet-evm'] } })),
    'info.getTxFee': () => node.txFee(),
    'info.upgrades': () => node.upgrades(),
    'info.acps': () => ({ acps: node.acps() }),
    'info.isBootstrapped': (p) => {
      knownChain(node, stringParam(paramsObject(p), 'chain')!);
      return { isBootstrapped: true };
    },
    'info.getBlockchainID': (p) => ({ blockchainID: knownChain(node, stringParam(paramsObject(p), 'alias')!) }),
    'info.peers': (p) => {
      const peers = node.peers(nodeIdsParam(paramsObject(p)));
      return { numPeers: String(peers.length), peers };
    },
    'info.uptime': (p) => node.uptime(subnetIdParam(paramsObject(p))),
  };
}

function healthMethods(node: NodeWorld): Record<string, Method> {
  const tagged = (kind: HealthKind) => (p: unknown) => node.health(kind, stringList(paramsObject(p), 'tags'));
  return { 'health.health': tagged('health'), 'health.readiness': tagged('readiness'), 'health.liveness': () => node.health('liveness') };
}

function xvmMethods(node: NodeWorld): Record<string, Method> {
  return {
    'xvm.getHeight': () => ({ height: String(node.xvmHeight()) }),
    'xvm.getBlockByHeight': (params) => {
      const p = paramsObject(params);
      const height = heightParam(p);
      const enc = encodingParam(p, ['hex', 'json']);
      const block = node.xvmBlock(Number(height));
      if (!block) throw serverError(`couldn't get block at height ${height}: not found`);
      return { block: enc === 'json' ? block : withChecksum(Buffer.from(JSON.stringify(block))), encoding: enc };
    },
    'xvm.getAssetDescription': (params) => {
      const id = stringParam(paramsObject(params), 'assetID')!;
      const a = node.assets().find((x) => x.assetID === id || x.symbol === id);
      if (!a) throw serverError(`couldn't find asset ${id}: not found`);
      return a;
    },
    'xvm.getUTXOs': (params) => {
      const p = paramsObject(params);
      const addresses = xAddressesParam(p);
      encodingParam(p, ['hex']);
      const limit = utxoLimitParam(p);
      const startIndex = startIndexParam(p);
      const source = stringParam(p, 'sourceChain', false);
      const sourceChain = source === undefined ? undefined : node.chainId(source);
      if (source !== undefined && (!sourceChain || sourceChain === X_CHAIN_ID.mainnet)) throw serverError(`sourceChain "${source}" is not a chain this chain imports from`);
      return node.getUtxos(addresses, limit, startIndex, sourceChain);
    },
  };
}

function evmMethods(node: NodeWorld, c: EvmChain): Record<string, Method> {
  const only = (name: string, f: Method): Record<string, Method> => (c.subnetEvm ? { [name]: f } : {});
  return {
    'eth_getChainConfig': () => node.chainConfig(c),
    ...only('eth_feeConfig', (params) => {
      // Checked for its errors only: the fee config here is the same at every block.
      blockParam(params);
      return node.feeConfig(c);
    }),
    ...only('eth_getActiveRulesAt', (params) => node.activeRules(c, unixTimeParam(params) ?? node.latestTime(c))),
  };
}

function nodeOf(ctx: RouteContext): NodeWorld {
  return ctx.world.node;
}

/** GET health report: 503 when a check fails; repeated `tag` parameters filter. */
function healthGet(kind: HealthKind) {
  return (ctx: RouteContext) => {
    const report = nodeOf(ctx).health(kind, ctx.query.getAll('tag'));
    return new Reply(report.healthy ? 200 : 503, report);
  };
}

function xvmChain(ctx: RouteContext): NodeWorld {
  const chain = ctx.params[0]!;
  if (chain !== 'X' && chain !== X_CHAIN_ID.mainnet) throw notFound(`no asset chain ${chain} on this node`);
  return nodeOf(ctx);
}

function evmChain(ctx: RouteContext): { node: NodeWorld; chain: EvmChain } {
  const node = nodeOf(ctx);
  const chain = node.evmChain(ctx.params[0]!);
  if (!chain) throw notFound(`no EVM chain ${ctx.params[0]} on this node`);
  return { node, chain };
}

function routes(prefix: string[], isPublic: boolean): RouteTable {
  const r = (path: Array<string | null>, name: string, handle: Route['handle'], method?: 'POST') => ({
    pattern: [...prefix, 'ext', ...path],
    route: { name: isPublic ? `public.${name}` : name, service: 'node' as const, weight: 1, ...(method ? { method } : {}), handle },
  });
  return [
    r(['info'], 'node.info', (ctx) => answer(ctx.body, infoMethods(nodeOf(ctx), isPublic)), 'POST'),
    r(['health'], 'node.health', (ctx) => answer(ctx.body, healthMethods(nodeOf(ctx))), 'POST'),
    r(['health'], 'node.healthGet', healthGet('health')),
    r(['health', 'health'], 'node.healthGet', healthGet('health')),
    r(['health', 'readiness'], 'node.readinessGet', healthGet('readiness')),
    r(['health', 'liveness'], 'node.livenessGet', healthGet('liveness')),
    r(['bc', null], 'node.xvm', (ctx) => answer(ctx.body, xvmMethods(xvmChain(ctx))), 'POST'),
    r(['bc', null, 'rpc'], 'node.evm', (ctx) => {
      const { node, chain } = evmChain(ctx);
      return answer(ctx.body, evmMethods(node, chain));
    }, 'POST'),
    r(['bc', null, 'validators'], 'node.validators', (ctx) => {
      const { node, chain } = evmChain(ctx);
      if (!chain.subnetEvm) throw notFound(`no validators API on chain ${ctx.params[0]}`);
      return answer(ctx.body, {
        'validators.getCurrentValidators': (p) => ({ validators: node.validators(chain, nodeIdsParam(paramsObject(p))) }),
      });
    }, 'POST'),
  ];
}

/** Node routes, and the same under /public as the public server serves them. */
export const NODE_ROUTES = [...routes([], false), ...routes(['public'], true)];

/** An unmatched path under /ext (or /public/ext) is the node's. */
export function isNodePath(segments: readonly string[]): boolean {
  return segments[0] === 'ext' || (segments[0] === 'public' && segments[1] === 'ext');
}
