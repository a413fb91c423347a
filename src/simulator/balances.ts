// Native and ERC-20 balances of any address at any block up to the head. A balance is a pure
// function of (seed, chain, holder, token, epoch of the block): it holds for EPOCH_BLOCKS blocks,
// so snapshots at nearby blocks agree and snapshots far apart differ.
import { amountOf, randomClass, type AmountClass } from './amounts.js';
import type { ChainInfo, Erc20Token, EvmWorld, Money } from './evm.js';
import { Rng, hashKey, labelBytes } from './hash.js';
import { checksumAddress } from './keccak.js';
import { fromUsd, type Currency } from './staking.js';
import { ExactNumber } from '../json.js';

export const EPOCH_BLOCKS = 1800;

export interface NativeTokenBalance {
  name: string;
  symbol: string;
  decimals: number;
  logoUri?: string;
  chainId: string;
  price?: Money;
  balance: string;
  balanceValue?: Money;
}

export type TokenReputation = 'Malicious' | 'Benign' | null;

export interface Erc20TokenBalance extends Erc20Token {
  chainId: string;
  balance: string;
  balanceValue?: Money;
  tokenReputation: TokenReputation;
}

export interface Erc20BalanceQuery {
  block: number;
  currency?: Currency;
  /** default true: tokens with reputation Malicious are left out */
  filterSpamTokens?: boolean;
  /** only these token contracts (any case) */
  contractAddresses?: readonly string[];
}

interface Token {
  address: string;
  name: string;
  symbol: string;
  decimals: number;
  logoUri?: string;
  priceUsd?: number;
  /** A price with more digits than a double holds, the same text in every currency (a dust token). */
  priceText?: string;
  spam: boolean;
  /** a token whose balances run past DECIMAL(38) */
  huge: boolean;
}

const NATIVE: Record<string, { name: string; symbol: string; priceUsd?: number }> = {
  '43114': { name: 'Avalanche', symbol: 'AVAX', priceUsd: 27.41 },
  '43113': { name: 'Avalanche', symbol: 'AVAX' },
  '432204': { name: 'Lake', symbol: 'LAKE', priceUsd: 0.0042 },
};

/** 24 significant digits: a double keeps 17, and writes 1.2345678901234568e-7. */
export const DUST_PRICE = '0.000000123456789012345678';

/** Tokens only balances know of: held, never transferred in the world's listings. */
const EXTRA_TOKENS: ReadonlyArray<Omit<Token, 'address'>> = [
  { name: 'Lake Staked AVAX', symbol: 'lsAVAX', decimals: 18, priceUsd: 29.87, spam: false, huge: false },
  { name: 'Bridged Ether', symbol: 'WETH.e', decimals: 18, priceUsd: 2471.5, spam: false, huge: false },
  { name: 'Lake Dust', symbol: 'DUST', decimals: 18, priceText: DUST_PRICE, spam: false, huge: false },
  { name: 'Claim $LAKE at lake-rewards.example.invalid', symbol: 'CLAIM', decimals: 18, spam: true, huge: true },
  { name: 'Visit airdrop.example.invalid', symbol: 'AIRDROP', decimals: 0, spam: true, huge: false },
];

function money(currency: Currency, value: number | ExactNumber): Money {
  return { currencyCode: currency, value };
}

/** Value of `balance` smallest units at `price` per whole token, rounded to cents. */
function valueOf(balance: string, decimals: number, price: number): number {
  const whole = Number(BigInt(balance) / 10n ** BigInt(decimals)) + Number(BigInt(balance) % 10n ** BigInt(decimals)) / 10 ** decimals;
  return Math.round(whole * price * 100) / 100;
}

export class BalanceWorld {
  private readonly tokens = new Map<string, Token[]>();

  constructor(readonly seed: number, private readonly evm: EvmWorld) {}

  private tokensOf(chain: ChainInfo): Token[] {
    let list = this.tokens.get(chain.chainId);
    if (!list) {
      const own = this.evm.contractsOf(chain.chainId).filter((c) => c.ercType === 'ERC-20').map((c): Token => ({
        address: c.address, name: c.name, symbol: c.symbol, decimals: c.decimals,
        ...(c.logoUri ? { logoUri: c.logoUri } : {}), ...(c.priceUsd !== undefined ? { priceUsd: c.priceUsd } : {}),
        spam: false, huge: c.decimals === 0,
      }));
      const extra = EXTRA_TOKENS.map((t, i): Token => ({ ...t, address: checksumAddress(labelBytes(`balance-token:${chain.chainId}:${i}`, 20)) }));
      list = [...own, ...extra];
      this.tokens.set(chain.chainId, list);
    }
    return list;
  }

  private amount(chain: ChainInfo, holder: string, token: string, decimals: number, block: number, cls?: AmountClass): string {
    const r = Rng.of(this.seed, 'balance', chain.chainId, holder.toLowerCase(), token.toLowerCase(), Math.floor(block / EPOCH_BLOCKS));
    return amountOf(cls ?? randomClass(r), r, decimals);
  }

  native(chain: ChainInfo, holder: string, block: number, currency: Currency = 'usd'): NativeTokenBalance {
    const n = NATIVE[chain.chainId]!;
    const balance = this.amount(chain, holder, 'native', 18, block);
    const out: NativeTokenBalance = {
      name: n.name, symbol: n.symbol, decimals: 18,
      logoUri: `https://images.example.invalid/${chain.chainId}/${n.symbol.toLowerCase()}-native.svg`,
      chainId: chain.chainId, balance,
    };
    if (n.priceUsd !== undefined) {
      const price = fromUsd(n.priceUsd, currency, 6);
      out.price = money(currency, price);
      out.balanceValue = money(currency, valueOf(balance, 18, price));
    }
    return out;
  }

  /** The ERC-20 balances of a holder at a block, in the order the service lists them. */
  erc20(chain: ChainInfo, holder: string, q: Erc20BalanceQuery): Erc20TokenBalance[] {
    const currency = q.currency ?? 'usd';
    const only = q.contractAddresses && new Set(q.contractAddresses.map((a) => a.toLowerCase()));
    const epoch = Math.floor(q.block / EPOCH_BLOCKS);
    const out: Erc20TokenBalance[] = [];
    for (const t of this.tokensOf(chain)) {
      if (only && !only.has(t.address.toLowerCase())) continue;
      if (t.spam && q.filterSpamTokens !== false) continue;
      // Spam is airdropped to everyone; other tokens are held by about four holders in five.
      if (!t.spam && hashKey(this.seed, 'holds', chain.chainId, holder.toLowerCase(), t.address.toLowerCase(), epoch) % 5 === 0) continue;
      const cls: AmountClass | undefined = t.huge ? (['d39', 'd78', 'max', 'small'] as const)[hashKey(this.seed, 'huge', holder.toLowerCase(), epoch) % 4] : undefined;
      const balance = this.amount(chain, holder, t.address, t.decimals, q.block, cls);
      const b: Erc20TokenBalance = {
        address: t.address, name: t.name, symbol: t.symbol, decimals: t.decimals,
        ...(t.logoUri ? { logoUri: t.logoUri } : {}),
        ercType: 'ERC-20', chainId: chain.chainId, balance,
        // The service rates tokens of the C-Chain only.
        tokenReputation: chain.chainId === '43114' ? (t.spam ? 'Malicious' : 'Benign') : null,
      };
      if (t.priceUsd !== undefined) {
        const price = fromUsd(t.priceUsd, currency, 6);
        b.price = money(currency, price);
        b.balanceValue = money(currency, valueOf(balance, t.decimals, price));
      } else if (t.priceText !== undefined) {
        b.price = money(currency, new ExactNumber(t.priceText));
        b.balanceValue = money(currency, valueOf(balance, t.decimals, Number(t.priceText)));
      }
      out.push(b);
    }
    return out;
  }
}
