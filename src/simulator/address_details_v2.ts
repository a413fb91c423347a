// An address's transactions, v2 (`GET /v2/chains/{chainId}/addresses/{address}/transactions`):
// the v1 full listing's very transactions (address_details.ts), each ERC-20 token with the
// reputation the service gives C-Chain tokens, and with `filterSpamTokens` the transfers of
// malicious tokens left out (a transaction left with nothing of the address's is left out too).
import { AddressDetails, type TransactionDetails } from './address_details.js';
import type { ChainInfo, Erc20Token } from './evm.js';
import { fromArray, iterate, type Listing } from './listing.js';
import { blockRange, booleanParam, dataChain, dataPage, enumParam, evmAddress, intParam } from './params.js';
import { WEIGHTS } from './ratelimit.js';
import type { RouteContext, RouteTable } from './route.js';
import type { SortOrder } from './staking.js';
import type { World } from './world.js';

export type TokenReputation = 'Malicious' | 'Benign' | null;

/** The world's spam token: the C-Chain's meme token (LMΩ). Only C-Chain tokens have a reputation. */
export function tokenReputation(chain: ChainInfo, symbol: string): TokenReputation {
  if (chain.chainId !== '43114') return null;
  return symbol === 'LMΩ' ? 'Malicious' : 'Benign';
}

/**
 * A v1 item in the v2 form: ERC-20 tokens carry their reputation, and with `filterSpam` the
 * transfers of malicious tokens are left out, and so is a call to such a token that leaves the
 * address nothing else.
 */
function v2(chain: ChainInfo, d: TransactionDetails, filterSpam: boolean): TransactionDetails | undefined {
  const erc20 = d.erc20Transfers
    .map((t) => {
      const token = (t as unknown as { erc20Token: Erc20Token }).erc20Token;
      return { ...t, erc20Token: { ...token, tokenReputation: tokenReputation(chain, token.symbol) } };
    })
    .filter((t) => !filterSpam || t.erc20Token.tokenReputation !== 'Malicious');
  const left = erc20.length + d.erc721Transfers.length + d.erc1155Transfers.length + d.internalTransactions.length;
  const to = d.nativeTransaction.to;
  const spamCall = to.symbol !== undefined && tokenReputation(chain, to.symbol) === 'Malicious';
  return filterSpam && left === 0 && spamCall ? undefined : { ...d, erc20Transfers: erc20 };
}

export function listV2(w: World, chain: ChainInfo, address: string, range: { startBlock?: number; endBlock?: number }, sortOrder: SortOrder, filterSpam: boolean): Listing<TransactionDetails> {
  const out: TransactionDetails[] = [];
  for (const d of iterate(new AddressDetails(w).list(chain, address, range, w.now, sortOrder))) {
    const x = v2(chain, d, filterSpam);
    if (x) out.push(x);
  }
  return fromArray(out);
}

function listTransactionsV2(ctx: RouteContext): unknown {
  const chain = dataChain(ctx, ctx.params[0]!);
  const address = evmAddress(ctx.params[1]!, 'address');
  const pageSize = intParam(ctx.query, 'pageSize', 1, 100, 10)!;
  const range = blockRange(ctx.query);
  const sortOrder = enumParam<SortOrder>(ctx.query, 'sortOrder', ['asc', 'desc']) ?? 'desc';
  const filterSpam = booleanParam(ctx.query, 'filterSpamTokens') ?? false;
  const key = JSON.stringify(['transactionDetailsV2', chain.chainId, address, range.startBlock ?? null, range.endBlock ?? null, sortOrder, filterSpam]);
  return dataPage(ctx, 'transactions', key, (w) => listV2(w, chain, address, range, sortOrder, filterSpam), pageSize);
}

export const ADDRESS_DETAIL_V2_ROUTES: RouteTable = [
  { pattern: ['v2', 'chains', null, 'addresses', null, 'transactions'], route: { name: 'transactionDetailsV2', service: 'data', weight: WEIGHTS.transactionDetailsV2, handle: listTransactionsV2 } },
];
