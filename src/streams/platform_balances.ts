// The P-, X- and C-Chain balances of addresses (getBalancesByAddresses), one snapshot a run: the
// answer is one object of categories (P: unlockedUnstaked, lockedStaked, atomicMemoryUnlocked, ...;
// X: locked, unlocked, atomicMemory...; C: its atomic memory only), each a list of per-asset sums; a
// row is one entry of one category. The chains' entries have one shape, so one declaration serves all. A category the
// service adds lands under its own name; an answer of another chain, or without a `balances` object
// of lists, stops the partition.
import type { Page } from '../decl/request.js';
import type { ExtractContext, StreamConfig, StreamDecl } from '../decl/stream.js';
import { RunError } from '../errors.js';
import { getJson, stamped } from './chain_reads.js';
import { NETWORK_COLUMN } from './common.js';
import { SNAPSHOT_AT } from './validators.js';

/** The categories of PChainBalance, as the service names them (docs/services.md, Data service). */
export const P_BALANCE_CATEGORIES = [
  'unlockedUnstaked', 'unlockedStaked', 'lockedPlatform', 'lockedStakeable', 'lockedStaked', 'pendingStaked', 'atomicMemoryUnlocked', 'atomicMemoryLocked',
] as const;

/** The categories of XChainBalances. */
export const X_BALANCE_CATEGORIES = ['locked', 'unlocked', 'atomicMemoryUnlocked', 'atomicMemoryLocked'] as const;

/** The categories of CChainAtomicBalances: the C-Chain answers its atomic memory only. */
export const C_BALANCE_CATEGORIES = ['atomicMemoryUnlocked', 'atomicMemoryLocked'] as const;

/** One partition per address, on the chain (P by default) of the entry's network: the query names the one address. */
export function addressPartitions(
  s: StreamConfig, query: Record<string, string>, blockchainId = 'p-chain',
): Array<{ id: string; path: Record<string, string>; query: Record<string, string>; values: Record<string, string> }> {
  const network = String(s.network);
  const suffix = Object.keys(query).sort().map((k) => `/${k}=${query[k]}`).join('');
  return (s.addresses as string[]).map((address) => ({
    id: `${network}/${address}${suffix}`,
    path: { network, blockchainId },
    query: { addresses: address, ...query },
    values: { network, address },
  }));
}

async function* balancePages(x: ExtractContext): AsyncGenerator<Page> {
  const takenAt = Math.floor(Date.now() / 1000);
  const body = (await getJson(x, x.path, x.endpoint, x.query)) as Record<string, unknown> | null;
  // The chains' answers are objects of lists alike: only chainInfo tells them apart.
  const chain = (body?.chainInfo as Record<string, unknown> | undefined)?.chainName;
  const asked = x.partition.path.blockchainId;
  if (chain !== asked) throw new RunError(`${x.endpoint}: the answer's chainInfo.chainName is ${JSON.stringify(chain)}, not ${JSON.stringify(asked)}`);
  const b = body?.balances;
  if (b === null || typeof b !== 'object' || Array.isArray(b)) throw new RunError(`${x.endpoint}: the answer has no balances object`);
  const items: unknown[] = [];
  for (const [category, list] of Object.entries(b as Record<string, unknown>)) {
    if (!Array.isArray(list)) throw new RunError(`${x.endpoint}: balances.${category} is not a list`);
    // A non-object entry is passed on as is: the transform rejects it with the reason.
    for (const e of list) items.push(e !== null && typeof e === 'object' && !Array.isArray(e) ? { ...e, _category: category } : e);
  }
  const at = x.config.blockTimestamp as number | undefined;
  yield { items: stamped(items, { takenAt, balanceAt: at ?? takenAt }) };
}

interface BalanceChain {
  blockchainId: 'p-chain' | 'x-chain' | 'c-chain';
  table: string;
  doc: string;
  addresses: string;
  categories: readonly string[];
  asset: string;
}

/** The balances of one chain: the shape the P- and X-Chain's answers share. */
function balanceStream(c: BalanceChain): StreamDecl {
  return {
    table: c.table,
    doc: c.doc,
    service: 'data',
    endpoint: '/v1/networks/{network}/blockchains/{blockchainId}/balances',
    items: 'balances',
    extract: balancePages,
    weight: 100,
    pageSize: { min: 0, max: 0, default: 0 },
    options: {
      network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
      addresses: { kind: 'primary_address[]', required: true, doc: `holders (${c.addresses}) whose balances to snapshot; one partition (and request) each` },
      blockTimestamp: { kind: 'unix_seconds', doc: 'the balances as of then (default: as of the run)' },
    },
    partitions: (s) => addressPartitions(s, s.blockTimestamp === undefined ? {} : { blockTimestamp: String(s.blockTimestamp) }, c.blockchainId),
    refresh: 'merge',
    // Two entries naming the same address at the same time take the same snapshot: one row each.
    mergeScope: 'table',
    key: ['network', 'snapshot_at', 'address', 'balance_at', 'category', 'asset_id', 'shared_with_chain_id'],
    keyDoc: 'a row is one entry of one category of one address in one snapshot: each run adds a snapshot (a run within the same second replaces it); atomic-memory entries are per chain shared with',
    columns: [
      NETWORK_COLUMN,
      SNAPSHOT_AT,
      { name: 'address', type: 'varchar', partition: 'address', doc: 'the holder, as given in the pipeline' },
      { name: 'balance_at', type: 'timestamptz', from: '_snapshot.balanceAt', required: true, stamp: true, doc: 'the time the balances are of: blockTimestamp as asked, else snapshot_at (UTC)' },
      {
        name: 'category', type: 'varchar', from: '_category', required: true,
        doc: `${c.categories.join(', ')} (the service's names; a category with nothing in it has no row)`,
      },
      { name: 'asset_id', type: 'varchar', from: 'assetId', required: true, doc: c.asset },
      { name: 'asset_name', type: 'varchar', from: 'name', doc: 'asset name' },
      { name: 'asset_symbol', type: 'varchar', from: 'symbol', doc: 'asset symbol' },
      { name: 'asset_denomination', type: 'integer', from: 'denomination', doc: 'decimals of the asset (9 for AVAX)' },
      { name: 'asset_type', type: 'varchar', from: 'type', doc: 'secp256k1 or nft' },
      { name: 'amount', type: 'amount', from: 'amount', required: true, units: 'asset_denomination', doc: c.blockchainId === 'p-chain' ? 'the sum, in nAVAX' : 'the sum, in the asset\'s smallest unit' },
      { name: 'utxo_count', type: 'integer', from: 'utxoCount', required: true, doc: 'UTXOs summed' },
      { name: 'shared_with_chain_id', type: 'varchar', from: 'sharedWithChainId', doc: 'atomic memory: the chain the UTXOs are shared with (exported to or imported from)' },
      { name: 'status', type: 'varchar', from: 'status', doc: 'atomic memory: status as sent' },
    ],
  };
}

export const platformBalances = balanceStream({
  blockchainId: 'p-chain',
  table: 'platform_balances',
  doc: 'snapshots of the P-Chain balances of addresses, in nAVAX by category (unlocked, locked, staked, pending, in atomic memory) and asset, one row per entry per run',
  addresses: 'P-avax1..., or avax1...',
  categories: P_BALANCE_CATEGORIES,
  asset: 'asset (AVAX)',
});

// issue 40, the primary network and the X-Chain
export const xchainBalances = balanceStream({
  blockchainId: 'x-chain',
  table: 'xchain_balances',
  doc: 'snapshots of the X-Chain balances of addresses by category (unlocked, locked by a locktime, in atomic memory) and asset, amounts exact in each asset\'s smallest unit, one row per entry per run',
  addresses: 'X-avax1..., or avax1...',
  categories: X_BALANCE_CATEGORIES,
  asset: 'asset (AVAX or another X-Chain asset)',
});

// issue 40, the C-Chain's side of the primary network
export const cchainBalances = balanceStream({
  blockchainId: 'c-chain',
  table: 'cchain_balances',
  doc: 'snapshots of the C-Chain atomic-memory balances of addresses (exported to the C-Chain, not yet imported) by asset and chain shared with, amounts exact, one row per entry per run',
  addresses: 'bech32 avax1..., or P-/X-avax1...: the owners atomic transactions name',
  categories: C_BALANCE_CATEGORIES,
  asset: 'asset (AVAX, or another asset exported to the C-Chain)',
});
