// An address's token transfers (`transactions:listErc20`, `:listErc721`, `:listErc1155`): the
// transfers of the token world (evm.ts) that the address sent or received, so that an address's
// listing and its tokens' listings (tokens/{address}/transfers) serve the very same items. Each
// contract's transfers are scanned once, in index order, into an index by address, and the scan
// is extended as a clocked world's head moves on; items are pure functions of their index, so a
// scanned item never changes.
import { WEIGHTS } from './ratelimit.js';
import type { RouteContext, RouteTable } from './route.js';
import { headAt, indexRange, visibleCount, type BlockRange, type ChainInfo, type ErcType, type EvmWorld, type Transfer } from './evm.js';
import { lowerBound, type Listing } from './listing.js';
import { blockRange, dataChain, dataPage, evmAddress, intParam } from './params.js';
import type { World } from './world.js';

interface Entry {
  /** the transfer's index in its contract's listing */
  i: number;
  block: number;
  logIndex: number;
}

interface Scan {
  scanned: number;
  /** lowercased address -> its transfers, index ascending */
  by: Map<string, Entry[]>;
}

export class AddressTransfers {
  private readonly scans = new Map<string, Scan>();

  constructor(private readonly evm: EvmWorld) {}

  /** The transfers of one contract the address sent or received, among its first `visible`. */
  private entries(chain: ChainInfo, contract: string, address: string, visible: number): Entry[] {
    const key = `${chain.chainId}:${contract.toLowerCase()}`;
    let s = this.scans.get(key);
    if (!s) this.scans.set(key, (s = { scanned: 0, by: new Map() }));
    for (; s.scanned < visible; s.scanned++) {
      const t = this.evm.transferAt(chain.chainId, contract, s.scanned);
      const e = { i: s.scanned, block: Number(t.blockNumber), logIndex: t.logIndex };
      const from = t.from.address.toLowerCase();
      const to = t.to.address.toLowerCase();
      for (const a of from === to ? [from] : [from, to]) {
        let list = s.by.get(a);
        if (!list) s.by.set(a, (list = []));
        list.push(e);
      }
    }
    const all = s.by.get(address) ?? [];
    return all.slice(0, lowerBound(0, all.length, (k) => all[k]!.i >= visible));
  }

  /**
   * The address's transfers of tokens of one type at `at`, newest first: by block, then by log
   * index, both descending (ties, which only tokens of different contracts can have, by contract).
   */
  list(chain: ChainInfo, type: ErcType, address: string, range: BlockRange = {}, at: number): Listing<Transfer> {
    const who = address.toLowerCase();
    const head = headAt(chain, at);
    const found: Array<Entry & { contract: string; c: number }> = [];
    this.evm.contractsOf(chain.chainId).forEach((c, ci) => {
      if (c.ercType !== type) return;
      const l = this.evm.transferLayout(chain.chainId, c.address);
      const visible = visibleCount(l, head);
      const { lo, hi } = indexRange(l, range, visible);
      for (const e of this.entries(chain, c.address, who, visible)) {
        if (e.i >= lo && e.i < hi) found.push({ ...e, contract: c.address, c: ci });
      }
    });
    found.sort((a, b) => b.block - a.block || b.logIndex - a.logIndex || a.c - b.c || b.i - a.i);
    return { length: found.length, at: (k) => this.evm.transferAt(chain.chainId, found[k]!.contract, found[k]!.i) };
  }
}

// A view of a world made by World.asOf shares its EvmWorld: the index is per EvmWorld.
const byWorld = new WeakMap<EvmWorld, AddressTransfers>();

export function addressTransfers(w: World): AddressTransfers {
  let t = byWorld.get(w.evm);
  if (!t) byWorld.set(w.evm, (t = new AddressTransfers(w.evm)));
  return t;
}

function listTransfers(ctx: RouteContext, type: ErcType): unknown {
  const chain = dataChain(ctx, ctx.params[0]!);
  const address = evmAddress(ctx.params[1]!, 'address');
  const pageSize = intParam(ctx.query, 'pageSize', 1, 100, 10)!;
  const range = blockRange(ctx.query);
  const key = JSON.stringify(['addressTransfers', type, chain.chainId, address, range.startBlock ?? null, range.endBlock ?? null]);
  return dataPage(ctx, 'transactions', key, (w) => addressTransfers(w).list(chain, type, address, range, w.now), pageSize);
}

const route = (listing: string, name: 'erc20Transactions' | 'erc721Transactions' | 'erc1155Transactions', type: ErcType): RouteTable[number] => ({
  pattern: ['v1', 'chains', null, 'addresses', null, `transactions:${listing}`],
  route: { name, service: 'data', weight: WEIGHTS[name], handle: (ctx) => listTransfers(ctx, type) },
});

export const ADDRESS_TRANSFER_ROUTES: RouteTable = [
  route('listErc20', 'erc20Transactions', 'ERC-20'),
  route('listErc721', 'erc721Transactions', 'ERC-721'),
  route('listErc1155', 'erc1155Transactions', 'ERC-1155'),
];
