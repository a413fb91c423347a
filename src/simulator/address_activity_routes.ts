// Routes of an address's activity (address_activity.ts): its native transactions, its NFT
// balances and the contracts it deployed. Every 400 names its parameter.
import { isBlockchainId, isEvmAddress, isEvmChainId } from '../ids.js';
import type { NativeTokenBalance } from './balances.js';
import { badRequest, notFound } from './errors.js';
import { CHAINS, type BlockRange, type ChainInfo } from './evm.js';
import { fromArray, type Listing } from './listing.js';
import { WEIGHTS } from './ratelimit.js';
import type { RouteContext, RouteTable } from './route.js';
import type { World } from './world.js';

function single(q: URLSearchParams, name: string): string | undefined {
  const all = q.getAll(name);
  if (all.length > 1) throw badRequest(`${name} must be given at most once`);
  return all[0];
}

function intParam(q: URLSearchParams, name: string, min: number, max: number | undefined, def?: number): number | undefined {
  const raw = single(q, name);
  if (raw === undefined) return def;
  if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw badRequest(`${name} must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min) throw badRequest(`${name} must not be less than ${min}`);
  if (max !== undefined && n > max) throw badRequest(`${name} must not be greater than ${max}`);
  return n;
}

function chainParam(ctx: RouteContext): ChainInfo {
  const raw = ctx.params[0]!;
  if (!isEvmChainId(raw) && !isBlockchainId(raw)) throw badRequest(`chainId must be an EVM chain id or a blockchain id, got "${raw}"`);
  const chain = CHAINS.find((c) => c.chainId === raw || c.blockchainId === raw);
  if (!chain) throw notFound(`chain ${raw} is not supported`);
  return chain;
}

function addressParam(raw: string | undefined, name: string): string {
  if (!isEvmAddress(raw)) throw badRequest(`${name} must be 0x followed by 40 hex digits, got "${raw}"`);
  return raw.toLowerCase();
}

function blockRange(q: URLSearchParams): BlockRange {
  const startBlock = intParam(q, 'startBlock', 0, undefined);
  const endBlock = intParam(q, 'endBlock', 0, undefined);
  if (startBlock !== undefined && endBlock !== undefined && startBlock >= endBlock) {
    throw badRequest('startBlock must be less than endBlock (startBlock is inclusive, endBlock exclusive)');
  }
  return { ...(startBlock !== undefined ? { startBlock } : {}), ...(endBlock !== undefined ? { endBlock } : {}) };
}

/** A page of a listing; a clocked world is frozen at the time of the listing's first page (routes.ts, dataPage). */
function dataPage<T>(ctx: RouteContext, field: string, queryKey: string, list: (w: World) => Listing<T>, pageSize: number): Record<string, unknown> {
  const token = single(ctx.query, 'pageToken');
  const state = token === undefined ? undefined : ctx.tokens.redeem(token, queryKey);
  const at = ctx.world.clocked ? (state?.at ?? ctx.world.now) : undefined;
  const listing = list(at === undefined ? ctx.world : ctx.world.asOf(at));
  const offset = state?.offset ?? 0;
  if (offset > listing.length) throw badRequest('pageToken is invalid');
  const end = Math.min(listing.length, offset + pageSize);
  const items: T[] = [];
  for (let k = offset; k < end; k++) items.push(listing.at(k));
  return end < listing.length ? { nextPageToken: ctx.tokens.issue(queryKey, end, at), [field]: items } : { [field]: items };
}

function blockNumberParam(ctx: RouteContext, chain: ChainInfo): number | undefined {
  const raw = single(ctx.query, 'blockNumber');
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw badRequest(`blockNumber must be a block number (decimal digits), got "${raw}"`);
  const head = ctx.world.headBlock(chain.chainId);
  if (Number(raw) > head) throw badRequest(`blockNumber ${raw} is above the latest block ${head}`);
  return Number(raw);
}

function listNative(ctx: RouteContext): unknown {
  const chain = chainParam(ctx);
  const address = addressParam(ctx.params[1], 'address');
  const pageSize = intParam(ctx.query, 'pageSize', 1, 100, 10)!;
  const range = blockRange(ctx.query);
  const key = JSON.stringify(['listNative', chain.chainId, address, range.startBlock ?? null, range.endBlock ?? null]);
  return dataPage(ctx, 'transactions', key, (w) => w.activity.listNative(chain, address, range, w.now), pageSize);
}

/** An NFT balance listing, of the block asked for or the head of the listing's snapshot; with the holder's native balance as the service sends it. */
function nftBalances(ctx: RouteContext, field: string, withBlock: boolean, list: (w: World, chain: ChainInfo, holder: string, block: number, contract?: string) => unknown[]): unknown {
  const chain = chainParam(ctx);
  const address = addressParam(ctx.params[1], 'address');
  const blockNumber = withBlock ? blockNumberParam(ctx, chain) : undefined;
  const pageSize = intParam(ctx.query, 'pageSize', 1, 500, 10)!;
  const rawContract = single(ctx.query, 'contractAddress');
  const contract = rawContract === undefined ? undefined : addressParam(rawContract, 'contractAddress');
  const key = JSON.stringify([field, chain.chainId, address, blockNumber ?? null, contract ?? null]);
  let native: NativeTokenBalance | undefined;
  const body = dataPage(ctx, field, key, (w) => {
    const at = blockNumber ?? w.headBlock(chain.chainId);
    native = w.nativeBalance(chain.chainId, address, at);
    return fromArray(list(w, chain, address, at, contract));
  }, pageSize);
  return { ...body, nativeTokenBalance: native };
}

function deployments(ctx: RouteContext): unknown {
  const chain = chainParam(ctx);
  const address = addressParam(ctx.params[1], 'address');
  const pageSize = intParam(ctx.query, 'pageSize', 1, 100, 10)!;
  const key = JSON.stringify(['deployments', chain.chainId, address]);
  return dataPage(ctx, 'contracts', key, (w) => fromArray(w.activity.deployments(w.catalog, chain, address)), pageSize);
}

export const ADDRESS_ACTIVITY_ROUTES: RouteTable = [
  { pattern: ['v1', 'chains', null, 'addresses', null, 'transactions:listNative'], route: { name: 'nativeTransactions', service: 'data', weight: WEIGHTS.nativeTransactions, handle: listNative } },
  {
    pattern: ['v1', 'chains', null, 'addresses', null, 'balances:listErc721'],
    route: { name: 'erc721Balances', service: 'data', weight: WEIGHTS.erc721Balances, handle: (ctx) => nftBalances(ctx, 'erc721TokenBalances', false, (w, c, h, b, k) => w.activity.erc721(c, h, b, k)) },
  },
  {
    pattern: ['v1', 'chains', null, 'addresses', null, 'balances:listErc1155'],
    route: { name: 'erc1155Balances', service: 'data', weight: WEIGHTS.erc1155Balances, handle: (ctx) => nftBalances(ctx, 'erc1155TokenBalances', true, (w, c, h, b, k) => w.activity.erc1155(c, h, b, k)) },
  },
  { pattern: ['v1', 'chains', null, 'contracts', null, 'deployments'], route: { name: 'contractDeployments', service: 'data', weight: WEIGHTS.contractDeployments, handle: deployments } },
];
