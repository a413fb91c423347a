// Blocks and the transactions in them. A block is a pure function of (seed, chain, number): its
// transaction count comes from a closed form of the running total, so cumulativeTransactions of
// block 71 million costs no more than that of block 1, and the block's gas and fee figures are
// the sums over its transactions.
import { amountOf, edgeClassAt, randomClass } from './amounts.js';
import type { ChainInfo, EvmWorld, RichAddress } from './evm.js';
import { Rng, hashKey } from './hash.js';
import { checksumAddress } from './keccak.js';

export interface Block {
  chainId: string;
  blockNumber: string;
  blockTimestamp: number;
  blockHash: string;
  txCount: number;
  baseFee: string;
  gasUsed: string;
  gasLimit: string;
  gasCost: string;
  parentHash: string;
  feesSpent: string;
  cumulativeTransactions: string;
}

export type CallType = 'NATIVE_TRANSFER' | 'CONTRACT_CALL' | 'CONTRACT_CREATION';

export interface Method {
  callType: CallType;
  methodHash: string;
  methodName?: string;
}

export interface BlockTransaction {
  blockNumber: string;
  blockTimestamp: number;
  blockHash: string;
  chainId: string;
  blockIndex: number;
  txHash: string;
  txStatus: '0' | '1';
  txType: number;
  gasLimit: string;
  gasUsed: string;
  gasPrice: string;
  nonce: string;
  from: RichAddress;
  to: RichAddress;
  method: Method;
  value: string;
}

/** Transactions per block average TX_PER_BLOCK; a block holds 0 to 2 * TX_PER_BLOCK of them. */
const TX_PER_BLOCK = 6;
const BLOCK_GAS_LIMIT = '16000000';
const ZERO_HASH = '0x' + '0'.repeat(64);

/** Methods of contract calls; the last has a hash the service cannot name. */
const METHODS: ReadonlyArray<{ methodHash: string; methodName?: string }> = [
  { methodHash: '0xa9059cbb', methodName: 'transfer(address,uint256)' },
  { methodHash: '0x095ea7b3', methodName: 'approve(address,uint256)' },
  { methodHash: '0x38ed1739', methodName: 'swapExactTokensForTokens(uint256,uint256,address[],address,uint256)' },
  { methodHash: '0xd0e30db0', methodName: 'deposit()' },
  { methodHash: '0x5c11d795' },
];

/** Rewrites a transaction as served (an address's own transactions, address_activity.ts). */
export type TxPatch = (chain: ChainInfo, n: number, i: number, tx: BlockTransaction) => BlockTransaction;

/** Hashes served, for lookups by hash; bounded so a long-running simulator does not grow forever. */
const MAX_KNOWN_HASHES = 200_000;

export class BlockWorld {
  private readonly byHash = new Map<string, { chainId: string; block: number }>();
  /** `patch`: every transaction served passes through it, so that listings by address agree with blocks. */
  constructor(readonly seed: number, private readonly evm: EvmWorld, private readonly patch?: TxPatch) {}

  /** Transactions from genesis through block n. Block 0 has none. */
  cumulative(chain: ChainInfo, n: number): number {
    if (n <= 0) return 0;
    return TX_PER_BLOCK * n + (hashKey(this.seed, 'block-txs', chain.chainId, n) % (TX_PER_BLOCK + 1));
  }

  txCount(chain: ChainInfo, n: number): number {
    return this.cumulative(chain, n) - this.cumulative(chain, n - 1);
  }

  private baseFee(chain: ChainInfo, n: number): bigint {
    return 25_000_000_000n + BigInt(hashKey(this.seed, 'base-fee', chain.chainId, n) % 10_000_000_000);
  }

  private remember(chain: ChainInfo, n: number, hash: string): void {
    if (this.byHash.size >= MAX_KNOWN_HASHES) this.byHash.delete(this.byHash.keys().next().value!);
    this.byHash.set(hash, { chainId: chain.chainId, block: n });
  }

  /** The block number of a hash served before on this chain, if any. */
  numberOfHash(chain: ChainInfo, hash: string): number | undefined {
    const hit = this.byHash.get(hash.toLowerCase());
    return hit && hit.chainId === chain.chainId ? hit.block : undefined;
  }

  block(chain: ChainInfo, n: number): Block {
    const txs = this.transactions(chain, n);
    let gasUsed = 0n;
    let fees = 0n;
    for (const t of txs) {
      gasUsed += BigInt(t.gasUsed);
      fees += BigInt(t.gasUsed) * BigInt(t.gasPrice);
    }
    const hash = this.evm.blockHash(chain, n);
    this.remember(chain, n, hash);
    return {
      chainId: chain.chainId,
      blockNumber: String(n),
      blockTimestamp: this.evm.blockTimestamp(chain, n),
      blockHash: hash,
      txCount: txs.length,
      baseFee: this.baseFee(chain, n).toString(),
      gasUsed: gasUsed.toString(),
      gasLimit: BLOCK_GAS_LIMIT,
      gasCost: String(hashKey(this.seed, 'block-gas-cost', chain.chainId, n) % 1_000_000),
      parentHash: n === 0 ? ZERO_HASH : this.evm.blockHash(chain, n - 1),
      feesSpent: fees.toString(),
      cumulativeTransactions: String(this.cumulative(chain, n)),
    };
  }

  /** The transactions of block n in block order. */
  transactions(chain: ChainInfo, n: number): BlockTransaction[] {
    const count = this.txCount(chain, n);
    const first = this.cumulative(chain, n - 1);
    const hash = this.evm.blockHash(chain, n);
    this.remember(chain, n, hash);
    const out: BlockTransaction[] = [];
    for (let i = 0; i < count; i++) {
      const tx = this.transaction(chain, n, i, first + i, hash);
      out.push(this.patch ? this.patch(chain, n, i, tx) : tx);
    }
    return out;
  }

  /** `g` is the transaction's index on the chain: it places the edge amounts, as in every listing. */
  private transaction(chain: ChainInfo, n: number, i: number, g: number, blockHash: string): BlockTransaction {
    const r = Rng.of(this.seed, 'block-tx', chain.chainId, n, i);
    const u = r.float();
    const callType: CallType = u < 0.35 ? 'NATIVE_TRANSFER' : u < 0.95 ? 'CONTRACT_CALL' : 'CONTRACT_CREATION';
    const failed = callType !== 'NATIVE_TRANSFER' && r.chance(0.05);
    const gasLimit = callType === 'NATIVE_TRANSFER' ? 21_000 : r.range(callType === 'CONTRACT_CREATION' ? 500_000 : 30_000, 1_200_000);
    const gasUsed = callType === 'NATIVE_TRANSFER' ? 21_000 : failed && r.chance(0.5) ? gasLimit : Math.floor(gasLimit * (0.3 + 0.7 * r.float()));
    const gasPrice = this.baseFee(chain, n) + BigInt(r.int(3_000_000_000));
    const edge = edgeClassAt(g);
    let to: RichAddress;
    let method: Method;
    let value: string;
    if (callType === 'NATIVE_TRANSFER') {
      to = this.evm.counterparty(chain.chainId, r);
      method = { callType, methodHash: '', methodName: 'Native Transfer' };
      value = amountOf(edge ?? randomClass(r), r);
    } else if (callType === 'CONTRACT_CALL') {
      const tokens = this.evm.contractsOf(chain.chainId);
      const c = r.chance(0.6) ? r.pick(tokens) : undefined;
      to = c ? { name: c.name, symbol: c.symbol, decimals: c.decimals, ...(c.logoUri ? { logoUri: c.logoUri } : {}), address: c.address } : { ...r.pick(this.evm.namedOf(chain.chainId)) };
      method = { callType, ...r.pick(METHODS) };
      value = edge ? amountOf(edge, r) : r.chance(0.2) ? amountOf('typical', r) : '0';
    } else {
      to = { address: checksumAddress(r.bytes(20)) };
      method = { callType, methodHash: '', methodName: 'Contract Created' };
      value = edge ? amountOf(edge, r) : '0';
    }
    return {
      blockNumber: String(n),
      blockTimestamp: this.evm.blockTimestamp(chain, n),
      blockHash,
      chainId: chain.chainId,
      blockIndex: i,
      txHash: '0x' + Rng.of(this.seed, 'block-tx-hash', chain.chainId, n, i).hex(32),
      txStatus: failed ? '0' : '1',
      txType: r.chance(0.8) ? 2 : 0,
      gasLimit: String(gasLimit),
      gasUsed: String(gasUsed),
      gasPrice: gasPrice.toString(),
      nonce: String(r.int(250_000)),
      from: this.evm.counterparty(chain.chainId, r),
      to,
      method,
      value,
    };
  }
}
