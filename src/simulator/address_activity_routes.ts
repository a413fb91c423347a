// Routes of an address's activity (address_activity.ts): its native transactions, its NFT
// balances and the contracts it deployed. Every 400 names its parameter.
import type { NativeTokenBalance } from './balances.js';
import type { ChainInfo } from './evm.js';
import { fromArray } from './listing.js';
import { WEIGHTS } from './ratelimit.js';
import type { RouteContext, RouteTable } from './route.js';
import type { World } from './world.js';
import { blockNumberParam, blockRange, dataChain, dataPage, evmAddress, intParam, single } from './params.js';

function listNative(ctx: RouteContext): unknown {
  const chain = dataChain(ctx, ctx.params[0]!);
  const address = evmAddress(ctx.params[1]!, 'address');
  const pageSize = intParam(ctx.query, 'pageSize', 1, 100, 10)!;
  const range = blockRange(ctx.query);
  const key = JSON.stringify(['listNative', chain.chainId, address, range.startBlock ?? null, range.endBlock ?? null]);
  return dataPage(ctx, 'transactions', key, (w) => w.activity.listNative(chain, address, range, w.now), pageSize);
}

/** An NFT balance listing, of the block asked for or the head of the listing's snapshot; with the holder's native balance as the service sends it. */
function nftBalances(ctx: RouteContext, field: string, withBlock: boolean, list: (w: World, chain: ChainInfo, holder: string, block: number, contract?: string) => unknown[]): unknown {
  const chain = dataChain(ctx, ctx.params[0]!);
  const address = evmAddress(ctx.params[1]!, 'address');
  const blockNumber = withBlock ? blockNumberParam(ctx, chain) : undefined;
  const pageSize = intParam(ctx.query, 'pageSize', 1, 500, 10)!;
  const rawContract = single(ctx.query, 'contractAddress');
  const contract = rawContract === undefined ? undefined : evmAddress(rawContract, 'contractAddress');
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
  const chain = dataChain(ctx, ctx.params[0]!);
  const address = evmAddress(ctx.params[1]!, 'address');
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
