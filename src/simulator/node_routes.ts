// The simulated node's routes (docs/services.md, Node JSON-RPC): JSON-RPC 2.0 over POST at
// /ext/info, /ext/health, /ext/bc/X (the asset chain: namespace avm, or xvm in the reference's
// shape), /ext/bc/{id}/rpc (EVM chains), /ext/bc/{id}/validators and, when enabled, /ext/admin
// (its reads only); health over GET with 200 or 503. The same node is served under /public as the
// public server would be: node-specific methods (getNodeID, getNodeIP, getVMs) answer "method not
// available" there. How a call is answered follows the node's shape (node_world.ts, NodeShape):
// AvalancheGo's own APIs run on gorilla/rpc's json2 codec, its EVM chains on go-ethereum's rpc.
import { ExactNumber } from '../json.js';
import { Reply, RpcFault, badRequest, notAvailable, notFound, serverError } from './errors.js';
import {
  blockParam, encodingParam, heightParam, nodeIdsParam, paramsObject, startIndexParam, stringList, stringParam, subnetIdParam,
  unixTimeParam, utxoLimitParam, xAddressesParam,
} from './node_params.js';
import type { EvmChain, HealthKind, NodeWorld } from './node_world.js';
import type { Route, RouteContext, RouteTable } from './route.js';
import { EVM_VM_ID, SUBNET_EVM_VM_ID, X_CHAIN_ID } from './subnets.js';
import { withChecksum } from './utxo_codec.js';
import { isBlockchainId } from '../ids.js';

type Obj = Record<string, unknown>;
type Method = (params: unknown) => unknown;

/** AvalancheGo's message for params its methods cannot unmarshal (utils/json/codec.go). */
export const INVALID_ARG = "couldn't unmarshal an argument. Ensure arguments are valid and properly formatted. See documentation for example calls";

const TEXT = 'text/plain; charset=utf-8';

/** The reference writes a uint64 as a decimal string. */
export function asStrings(v: unknown): unknown {
  if (v instanceof ExactNumber) return v.text;
  if (Array.isArray(v)) return v.map(asStrings);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asStrings(x)]));
  return v;
}

/** The method name as the node's codec looks it up: the first letter after the dot upper-cased. */
function goName(method: string): string {
  const i = method.indexOf('.');
  return i < 0 ? method : method.slice(0, i + 1) + method.charAt(i + 1).toUpperCase() + method.slice(i + 2);
}

/** The JSON-RPC envelope of an EVM chain (go-ethereum's rpc): -32601 for no such method, -32602 for bad params. */
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

/**
 * One of the node's own APIs (`service`: info, health, avm, validators, admin). As AvalancheGo:
 * a content type other than application/json is a 415 in plain text; every error (no such
 * service or method, params it cannot read, what the method refuses) is -32000 on HTTP 200 with
 * `data: null`, but for an envelope that is not JSON-RPC 2.0 (-32600) or not JSON (-32700). As
 * the reference: the envelope of the EVM chains, uint64 fields as strings.
 */
function nodeApi(ctx: RouteContext, service: string, methods: Record<string, Method>): unknown {
  const node = nodeOf(ctx);
  if (node.shape === 'reference') {
    let body: unknown;
    try {
      body = JSON.parse(ctx.text);
    } catch {
      throw badRequest('the body is not valid JSON');
    }
    return asStrings(answer(body, methods));
  }
  const type = (ctx.contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') return new Reply(415, `rpc: unrecognized Content-Type: ${type}`, TEXT);
  let req: Obj;
  try {
    req = JSON.parse(ctx.text) as Obj;
    if (req === null || typeof req !== 'object' || Array.isArray(req)) throw new SyntaxError('json: cannot unmarshal into a request object');
  } catch (err) {
    return { jsonrpc: '2.0', error: { code: -32700, message: (err as Error).message, data: null }, id: null };
  }
  const id = req.id ?? null;
  const error = (code: number, message: string, data: unknown = null) => ({ jsonrpc: '2.0', error: { code, message, data }, id });
  if (req.jsonrpc !== '2.0') return error(-32600, 'jsonrpc must be 2.0', req);
  const name = typeof req.method === 'string' ? req.method : '';
  const parts = name.split('.');
  if (parts.length !== 2) return error(-32000, `rpc: service/method request ill-formed: "${name}"`);
  const first = parts[1]!.charAt(0);
  if (first !== first.toLowerCase()) return error(-32000, 'method must start with a non-uppercase letter');
  if (parts[0] !== service) return error(-32000, `rpc: can't find service "${goName(name)}"`);
  const method = methods[name];
  if (!method) return error(-32000, `rpc: can't find method "${goName(name)}"`);
  try {
    return { jsonrpc: '2.0', result: method(req.params), id };
  } catch (err) {
    if (!(err instanceof RpcFault)) throw err;
    // The public server's refusals keep their code; the node's own errors are all -32000.
    if (err.code === -32601) return error(err.code, err.message);
    return error(-32000, err.code === -32602 ? INVALID_ARG : err.message);
  }
}

/** go-ethereum's rpc takes these content types (graft/evm/rpc/http.go); AvalancheGo's shape only. */
const EVM_TYPES = ['application/json', 'application/json-rpc', 'application/jsonrequest'];

function evmApi(ctx: RouteContext, methods: Record<string, Method>): unknown {
  const node = nodeOf(ctx);
  if (node.shape === 'avalanchego' && !EVM_TYPES.includes((ctx.contentType ?? '').split(';')[0]!.trim().toLowerCase())) {
    return new Reply(415, 'invalid content type, only application/json is supported', TEXT);
  }
  let body: unknown;
  try {
    body = JSON.parse(ctx.text);
  } catch {
    if (node.shape === 'reference') throw badRequest('the body is not valid JSON');
    return { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } };
  }
  const out = answer(body, methods);
  return node.shape === 'reference' ? asStrings(out) : out;
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
    // AvalancheGo reads no argument (its args are struct{}): subnetID is not even checked.
    'info.uptime': (p) => node.uptime(node.shape === 'avalanchego' ? undefined : subnetIdParam(paramsObject(p))),
  };
}

function healthMethods(node: NodeWorld): Record<string, Method> {
  const tagged = (kind: HealthKind) => (p: unknown) => node.health(kind, stringList(paramsObject(p), 'tags'));
  return { 'health.health': tagged('health'), 'health.readiness': tagged('readiness'), 'health.liveness': () => node.health('liveness') };
}

function assetMethods(node: NodeWorld): Record<string, Method> {
  const ns = node.assetNamespace;
  return {
    [`${ns}.getHeight`]: () => ({ height: String(node.xvmHeight()) }),
    [`${ns}.getBlockByHeight`]: (params) => {
      const p = paramsObject(params);
      const height = heightParam(p);
      const enc = encodingParam(p, ['hex', 'json']);
      const block = node.xvmBlock(Number(height));
      if (!block) throw serverError(`couldn't get block at height ${height}: not found`);
      return { block: enc === 'json' ? block : withChecksum(Buffer.from(JSON.stringify(asStrings(block)))), encoding: enc };
    },
    [`${ns}.getAssetDescription`]: (params) => {
      const id = stringParam(paramsObject(params), 'assetID')!;
      const a = node.assets().find((x) => x.assetID === id || x.symbol === id);
      if (!a) throw serverError(`couldn't find asset ${id}: not found`);
      return a;
    },
    [`${ns}.getUTXOs`]: (params) => {
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

function adminMethods(node: NodeWorld): Record<string, Method> {
  return {
    'admin.getChainAliases': (p) => {
      const chain = stringParam(paramsObject(p), 'chain')!;
      // The node parses an id (ids.FromString): an alias is refused.
      if (!isBlockchainId(chain)) throw serverError(`couldn't parse "${chain}" as a chain ID`);
      return { aliases: node.chainAliases(chain) };
    },
    'admin.getLoggerLevel': (p) => ({ loggerLevels: node.loggerLevels(stringParam(paramsObject(p), 'loggerName', false)) }),
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
    const node = nodeOf(ctx);
    const report = node.health(kind, ctx.query.getAll('tag'));
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
    route: { name: isPublic ? `public.${name}` : name, service: 'node' as const, weight: 1, ...(method ? { method, ownBody: true } : {}), handle },
  });
  return [
    r(['info'], 'node.info', (ctx) => nodeApi(ctx, 'info', infoMethods(nodeOf(ctx), isPublic)), 'POST'),
    r(['health'], 'node.health', (ctx) => nodeApi(ctx, 'health', healthMethods(nodeOf(ctx))), 'POST'),
    r(['health'], 'node.healthGet', healthGet('health')),
    r(['health', 'health'], 'node.healthGet', healthGet('health')),
    r(['health', 'readiness'], 'node.readinessGet', healthGet('readiness')),
    r(['health', 'liveness'], 'node.livenessGet', healthGet('liveness')),
    r(['bc', null], 'node.xvm', (ctx) => {
      const node = xvmChain(ctx);
      return nodeApi(ctx, node.assetNamespace, assetMethods(node));
    }, 'POST'),
    r(['bc', null, 'rpc'], 'node.evm', (ctx) => {
      const { node, chain } = evmChain(ctx);
      return evmApi(ctx, evmMethods(node, chain));
    }, 'POST'),
    r(['bc', null, 'validators'], 'node.validators', (ctx) => {
      const { node, chain } = evmChain(ctx);
      if (!chain.subnetEvm) throw notFound(`no validators API on chain ${ctx.params[0]}`);
      return nodeApi(ctx, 'validators', {
        'validators.getCurrentValidators': (p) => ({ validators: node.validators(chain, nodeIdsParam(paramsObject(p))) }),
      });
    }, 'POST'),
    // Off unless enabled, as on a node (--api-admin-enabled); the public server never has it.
    r(['admin'], 'node.admin', (ctx) => {
      const node = nodeOf(ctx);
      if (!node.admin || isPublic) throw notFound('404 page not found');
      return nodeApi(ctx, 'admin', adminMethods(node));
    }, 'POST'),
  ];
}

/** Node routes, and the same under /public as the public server serves them. */
export const NODE_ROUTES = [...routes([], false), ...routes(['public'], true)];

/** An unmatched path under /ext (or /public/ext) is the node's. */
export function isNodePath(segments: readonly string[]): boolean {
  return segments[0] === 'ext' || (segments[0] === 'public' && segments[1] === 'ext');
}
