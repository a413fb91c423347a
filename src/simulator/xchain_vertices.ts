// The X-Chain's vertices (listLatestXChainVertices, getVertexByHeight): the DAG it ran on before
// Cortina linearized it into blocks, so a fixed set that ends where the X-Chain's blocks begin. Each
// height holds one to three vertices, each the child of one or two vertices of the height below.
import type { Network } from '../ids.js';
import { badRequest } from './errors.js';
import { Rng, id32 } from './hash.js';
import { descending, fromArray, type Listing } from './listing.js';
import { enumParam, intParam, networkParam, pageAt } from './params.js';
import { X_CHAIN } from './primary.js';
import { WEIGHTS } from './ratelimit.js';
import type { RouteContext, RouteTable } from './route.js';
import { stakingNetwork, type StakingNetwork } from './staking.js';

export interface XChainVertex {
  vertexHash: string;
  parentHashes: string[];
  vertexHeight: number;
  vertexIndex: number;
  vertexTimestamp: number;
  txCount: number;
  transactions: string[];
  vertexSizeBytes: number;
}

/** Cortina's activation on the X-Chain (2023-04-25): the last vertex is just before it. */
const CORTINA = Date.UTC(2023, 3, 25) / 1000;
const VERTICES: Record<StakingNetwork, number> = { mainnet: 2400, fuji: 600 };

interface Shape {
  /** the first vertex index at each height, and one past the last at the end */
  starts: number[];
  heightOf: number[];
}

const shapes = new Map<string, Shape>();

function shape(seed: number, net: StakingNetwork): Shape {
  const key = `${seed}:${net}`;
  let s = shapes.get(key);
  if (!s) {
    const starts: number[] = [];
    const heightOf: number[] = [];
    for (let i = 0, h = 0; i < VERTICES[net]; h++) {
      starts.push(i);
      const n = Math.min(VERTICES[net] - i, 1 + Rng.of(seed, 'xvertexwidth', net, h).int(3));
      for (let k = 0; k < n; k++) heightOf.push(h);
      i += n;
    }
    starts.push(VERTICES[net]);
    shapes.set(key, (s = { starts, heightOf }));
  }
  return s;
}

function vertexHash(seed: number, net: StakingNetwork, i: number): string {
  return id32(Rng.of(seed, 'xvertex', net, i));
}

export function vertex(seed: number, net: StakingNetwork, i: number): XChainVertex {
  const { starts, heightOf } = shape(seed, net);
  const h = heightOf[i]!;
  const r = Rng.of(seed, 'xvertexbody', net, i);
  const below = h === 0 ? [] : Array.from({ length: starts[h]! - starts[h - 1]! }, (_, k) => starts[h - 1]! + k);
  const parents = below.length <= 1 ? below : r.chance(0.5) ? below.slice(0, 2) : [below[r.int(below.length)]!];
  const transactions = Array.from({ length: r.int(6) }, () => id32(r));
  return {
    vertexHash: vertexHash(seed, net, i), parentHashes: parents.map((p) => vertexHash(seed, net, p)), vertexHeight: h, vertexIndex: i,
    vertexTimestamp: CORTINA - 2 * (VERTICES[net] - i), txCount: transactions.length, transactions, vertexSizeBytes: 90 + 33 * parents.length + transactions.reduce((n) => n + 250 + r.int(900), 0),
  };
}

/** Every vertex of a network, newest (highest index) first. */
export function listVertices(seed: number, network: Network): Listing<XChainVertex> {
  const net = stakingNetwork(network);
  return descending(0, VERTICES[net], (i) => vertex(seed, net, i));
}

function xChainOnly(ctx: RouteContext): Network {
  const network = networkParam(ctx.params[0]!);
  const chain = ctx.params[1]!;
  if (chain !== 'x-chain' && chain !== X_CHAIN[stakingNetwork(network)]) throw badRequest(`blockchainId must be the X-Chain (x-chain or ${X_CHAIN[stakingNetwork(network)]}): vertices are its only`);
  return network;
}

function vertices(ctx: RouteContext): unknown {
  const network = xChainOnly(ctx);
  const pageSize = intParam(ctx.query, 'pageSize', 1, 100, 10)!;
  const { items, nextPageToken } = pageAt(ctx, JSON.stringify(['xVertices', network]), pageSize, 'data', () => listVertices(ctx.world.seed, network));
  const body = { vertices: items, chainInfo: { chainName: 'x-chain', network } };
  return nextPageToken === undefined ? body : { nextPageToken, ...body };
}

function verticesByHeight(ctx: RouteContext): unknown {
  const network = xChainOnly(ctx);
  const height = intParam(ctx.query, 'vertexHeight', 0);
  if (height === undefined) throw badRequest('vertexHeight is required');
  const sortOrder = enumParam(ctx.query, 'sortOrder', ['asc', 'desc'] as const) ?? 'desc';
  const pageSize = intParam(ctx.query, 'pageSize', 1, 100, 10)!;
  const net = stakingNetwork(network);
  const { starts } = shape(ctx.world.seed, net);
  const at = height + 1 < starts.length ? Array.from({ length: starts[height + 1]! - starts[height]! }, (_, k) => vertex(ctx.world.seed, net, starts[height]! + k)) : [];
  const key = JSON.stringify(['xVerticesByHeight', network, height, sortOrder]);
  const { items, nextPageToken } = pageAt(ctx, key, pageSize, 'data', () => fromArray(sortOrder === 'asc' ? at : [...at].reverse()));
  const body = { vertices: items, chainInfo: { chainName: 'x-chain', network } };
  return nextPageToken === undefined ? body : { nextPageToken, ...body };
}

export const VERTEX_ROUTES: RouteTable = [
  { pattern: ['v1', 'networks', null, 'blockchains', null, 'vertices'], route: { name: 'xVertices', service: 'data', weight: WEIGHTS.xVertices, handle: vertices } },
  { pattern: ['v1', 'networks', null, 'blockchains', null, 'vertices:listByHeight'], route: { name: 'xVerticesByHeight', service: 'data', weight: WEIGHTS.xVertices, handle: verticesByHeight } },
];
