// An address's full transaction listing (`GET .../addresses/{address}/transactions`) and its
// collectibles (`balances:listCollectibles`), both derived from the worlds the narrower listings
// serve, so that the tables agree: a transaction is one the address's native listing
// (address_activity.ts), token transfer listings (address_transfers.ts) or internal-transaction
// listing (evm.ts) holds, with the very items those listings send nested in it; a collectible is a
// holding of the ERC-721 or ERC-1155 listing at the same block.
//
// The worlds give each listing its own transactions: an address's native transactions carry no
// transfers or internal calls, and the transactions of its transfers and internal calls are not in
// the block world. Such a transaction's nativeTransaction is made here from its hash (the carrier),
// with the block, time and hash of its items.
import type { BlockTransaction, Method } from './blocks.js';
import { headAt, type BlockRange, type ChainInfo, type ErcType, type InternalTransaction, type RichAddress, type Transfer } from './evm.js';
import { Rng, memoized } from './hash.js';
import { fromArray, iterate, type Listing } from './listing.js';
import { addressTransfers } from './address_transfers.js';
import { WEIGHTS } from './ratelimit.js';
import type { RouteContext, RouteTable } from './route.js';
import type { SortOrder } from './staking.js';
import { blockRange, dataChain, dataPage, enumParam, evmAddress, intParam, single } from './params.js';
import type { World } from './world.js';

type Details<T> = Omit<T, 'blockNumber' | 'blockTimestamp' | 'blockHash' | 'txHash'>;

/** One item of the full listing (TransactionDetails): the nested lists hold the address's own items only. */
export interface TransactionDetails {
  nativeTransaction: BlockTransaction;
  erc20Transfers: Array<Details<Transfer>>;
  erc721Transfers: Array<Details<Transfer>>;
  erc1155Transfers: Array<Details<Transfer>>;
  internalTransactions: Array<Details<InternalTransaction>>;
}

const LISTS: Record<ErcType, 'erc20Transfers' | 'erc721Transfers' | 'erc1155Transfers'> = {
  'ERC-20': 'erc20Transfers', 'ERC-721': 'erc721Transfers', 'ERC-1155': 'erc1155Transfers',
};

/** The method a token transfer's transaction calls, by standard. */
const TRANSFER_METHODS: Record<ErcType, Method> = {
  'ERC-20': { callType: 'CONTRACT_CALL', methodHash: '0xa9059cbb', methodName: 'transfer(address,uint256)' },
  'ERC-721': { callType: 'CONTRACT_CALL', methodHash: '0x42842e0e', methodName: 'safeTransferFrom(address,address,uint256)' },
  'ERC-1155': { callType: 'CONTRACT_CALL', methodHash: '0xf242432a', methodName: 'safeTransferFrom(address,address,uint256,uint256,bytes)' },
};
const INTERNAL_METHOD: Method = { callType: 'CONTRACT_CALL', methodHash: '0x38ed1739', methodName: 'swapExactTokensForTokens(uint256,uint256,address[],address,uint256)' };
const ZERO_ADDRESS = /^0x0{40}$/i;

/** The nested form of an item: its transaction's fields are the parent's. */
function nested<T extends { blockNumber: string; blockTimestamp: number; blockHash: string; txHash: string }>(item: T): Details<T> {
  const { blockNumber: _n, blockTimestamp: _t, blockHash: _h, txHash: _x, ...rest } = item;
  return rest;
}

function emptyDetails(nativeTransaction: BlockTransaction): TransactionDetails {
  return { nativeTransaction, erc20Transfers: [], erc721Transfers: [], erc1155Transfers: [], internalTransactions: [] };
}

/** Listings by world clock and query, the last few: a listing's pages are asked one after another. */
const MEMO_SIZE = 32;
const memo = new WeakMap<object, Map<string, TransactionDetails[]>>();

export class AddressDetails {
  constructor(private readonly w: World) {}

  /**
   * The transaction that carries items of no native transaction of the world: a contract call
   * made in the items' block, by the sender of its first transfer (or the receiver of a mint) to the
   * token contract, or by a wallet to the contract whose internal calls it made.
   */
  private carrier(chain: ChainInfo, first: Transfer | InternalTransaction, to: RichAddress, method: Method, from?: RichAddress): BlockTransaction {
    const r = Rng.of(this.w.seed, 'carrier', chain.chainId, first.txHash);
    const n = Number(first.blockNumber);
    const gasLimit = r.range(60_000, 1_200_000);
    return {
      blockNumber: first.blockNumber,
      blockTimestamp: first.blockTimestamp,
      blockHash: first.blockHash,
      chainId: chain.chainId,
      blockIndex: r.int(Math.max(1, this.w.blocks.txCount(chain, n))),
      txHash: first.txHash,
      txStatus: '1',
      txType: 2,
      gasLimit: String(gasLimit),
      gasUsed: String(Math.floor(gasLimit * (0.3 + 0.7 * r.float()))),
      gasPrice: String(25_000_000_000 + r.int(13_000_000_000)),
      nonce: String(r.int(250_000)),
      from: from ?? { ...this.w.evm.counterparty(chain.chainId, r) },
      to,
      method: { ...method },
      value: '0',
    };
  }

  /** Every transaction of the address in the range at `at`, newest first (block, then its place in the block). */
  private all(chain: ChainInfo, address: string, range: BlockRange, at: number): TransactionDetails[] {
    const key = JSON.stringify([chain.chainId, address, range.startBlock ?? null, range.endBlock ?? null, headAt(chain, at)]);
    let byQuery = memo.get(this.w.evm);
    if (!byQuery) memo.set(this.w.evm, (byQuery = new Map()));
    return memoized(byQuery, MEMO_SIZE, key, () => this.collect(chain, address, range, at));
  }

  private collect(chain: ChainInfo, address: string, range: BlockRange, at: number): TransactionDetails[] {
    const byHash = new Map<string, TransactionDetails>();
    for (const t of iterate(this.w.activity.listNative(chain, address, range, at))) byHash.set(t.txHash, emptyDetails(t));
    for (const type of Object.keys(LISTS) as ErcType[]) {
      // Newest first; within a transaction the log order is ascending.
      const list = [...iterate(addressTransfers(this.w).list(chain, type, address, range, at))].reverse();
      for (const t of list) {
        let d = byHash.get(t.txHash);
        if (!d) {
          const token = 'erc20Token' in t ? t.erc20Token : 'erc721Token' in t ? t.erc721Token : t.erc1155Token;
          const c = this.w.evm.contract(chain.chainId, token.address)!;
          const to: RichAddress = { name: c.name, symbol: c.symbol, ...(type === 'ERC-20' ? { decimals: c.decimals } : {}), ...(c.logoUri ? { logoUri: c.logoUri } : {}), address: c.address };
          const sender = ZERO_ADDRESS.test(t.from.address) ? t.to : t.from;
          byHash.set(t.txHash, (d = emptyDetails(this.carrier(chain, t, to, TRANSFER_METHODS[type], { ...sender }))));
        }
        d[LISTS[type]].push(nested(t));
      }
    }
    // Oldest first: a transaction's internal calls in the order they were made.
    const internals = [...iterate(this.w.evm.listInternals(chain.chainId, address, range, at))].reverse();
    const owner = this.w.evm.owner(chain.chainId, address);
    for (const t of internals) {
      let d = byHash.get(t.txHash);
      if (!d) {
        // The call came into the contract that made it: the owner when it called out, else its caller.
        const outgoing = t.from.address.toLowerCase() === address;
        byHash.set(t.txHash, (d = emptyDetails(this.carrier(chain, t, outgoing && owner ? { ...owner } : { ...t.from }, INTERNAL_METHOD))));
      }
      d.internalTransactions.push(nested(t));
    }
    return [...byHash.values()].sort((a, b) => {
      const x = a.nativeTransaction;
      const y = b.nativeTransaction;
      return Number(y.blockNumber) - Number(x.blockNumber) || y.blockIndex - x.blockIndex || (x.txHash < y.txHash ? 1 : x.txHash > y.txHash ? -1 : 0);
    });
  }

  /** The address's transactions at `at`: newest first unless `asc`. */
  list(chain: ChainInfo, address: string, range: BlockRange = {}, at: number, sortOrder: SortOrder = 'desc'): Listing<TransactionDetails> {
    const all = this.all(chain, address.toLowerCase(), range, at);
    return fromArray(sortOrder === 'asc' ? [...all].reverse() : all);
  }

  /** The ERC-721 tokens and ERC-1155 balances of a holder at a block: the two NFT listings' items, in that order. */
  collectibles(chain: ChainInfo, holder: string, block: number, contractAddress?: string): unknown[] {
    return [...this.w.activity.erc721(chain, holder, block, contractAddress), ...this.w.activity.erc1155(chain, holder, block, contractAddress)];
  }
}

function listTransactions(ctx: RouteContext): unknown {
  const chain = dataChain(ctx, ctx.params[0]!);
  const address = evmAddress(ctx.params[1]!, 'address');
  const pageSize = intParam(ctx.query, 'pageSize', 1, 100, 10)!;
  const range = blockRange(ctx.query);
  const sortOrder = enumParam<SortOrder>(ctx.query, 'sortOrder', ['asc', 'desc']) ?? 'desc';
  const key = JSON.stringify(['transactionDetails', chain.chainId, address, range.startBlock ?? null, range.endBlock ?? null, sortOrder]);
  return dataPage(ctx, 'transactions', key, (w) => new AddressDetails(w).list(chain, address, range, w.now, sortOrder), pageSize);
}

/** Of the service's latest block: the listing takes no block (docs/services.md, Data service). */
function listCollectibles(ctx: RouteContext): unknown {
  const chain = dataChain(ctx, ctx.params[0]!);
  const address = evmAddress(ctx.params[1]!, 'address');
  const pageSize = intParam(ctx.query, 'pageSize', 1, 500, 10)!;
  const rawContract = single(ctx.query, 'contractAddress');
  const contract = rawContract === undefined ? undefined : evmAddress(rawContract, 'contractAddress');
  const key = JSON.stringify(['collectibleBalances', chain.chainId, address, contract ?? null]);
  return dataPage(ctx, 'collectibleBalances', key, (w) => fromArray(new AddressDetails(w).collectibles(chain, address, w.headBlock(chain.chainId), contract)), pageSize);
}

export const ADDRESS_DETAIL_ROUTES: RouteTable = [
  { pattern: ['v1', 'chains', null, 'addresses', null, 'transactions'], route: { name: 'transactionDetails', service: 'data', weight: WEIGHTS.transactionDetails, handle: listTransactions } },
  { pattern: ['v1', 'chains', null, 'addresses', null, 'balances:listCollectibles'], route: { name: 'collectibleBalances', service: 'data', weight: WEIGHTS.collectibleBalances, handle: listCollectibles } },
];
