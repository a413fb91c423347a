import type { Page } from '../decl/request.js';
import { PRICE_KEYS } from './common.js';
import type { ExtractContext, StreamDecl } from '../decl/stream.js';
import { snapshotBlock, stamped } from './chain_reads.js';
import { BALANCE_OPTIONS, balancePartitions, SNAPSHOT_COLUMNS, SNAPSHOT_KEY_DOC, TOKEN_FIELDS, VALUE_COLUMNS } from './native_balances.js';

async function* erc20Pages(x: ExtractContext): AsyncGenerator<Page> {
  const snap = await snapshotBlock(x, x.partition.path.chainId!, x.config.blockNumber as number | undefined);
  // Pages are rebuilt without the raw body: their items carry the snapshot, which the body does not.
  for await (const page of x.paginate({ query: { ...x.query, blockNumber: snap.blockNumber } })) yield { items: stamped(page.items, snap), next: page.next };
}

export const erc20Balances: StreamDecl = {
  table: 'erc20_balances',
  doc: 'ERC-20 balance snapshots of addresses at a block (the block is pinned first with `GET /v1/chains/{chainId}/blocks[/{blockId}]`, 10 CU)',
  service: 'data',
  endpoint: '/v1/chains/{chainId}/addresses/{address}/balances:listErc20',
  items: 'erc20TokenBalances',
  extract: erc20Pages,
  weight: 20,
  // Prices are JSON numbers (Money.value): kept as sent.
  exactNumbers: PRICE_KEYS,
  pageSize: { min: 1, max: 500, default: 500 },
  options: {
    ...BALANCE_OPTIONS,
    filterSpamTokens: { kind: 'boolean', doc: 'leave out tokens the service rates as spam (the service defaults to true)' },
    contractAddresses: { kind: 'evm_address[]', doc: 'only these token contracts' },
  },
  partitions: balancePartitions,
  refresh: 'merge',
  mergeScope: 'partition',
  key: ['chain_id', 'address', 'block_number', 'token_address'],
  keyDoc: SNAPSHOT_KEY_DOC,
  knownFields: ['chainId'],
  columns: [
    ...SNAPSHOT_COLUMNS,
    { name: 'token_address', type: 'evm_address', from: 'address', required: true, doc: 'token contract, lowercased' },
    ...TOKEN_FIELDS,
    { name: 'erc_type', type: 'varchar', from: 'ercType', doc: "'ERC-20'" },
    { name: 'token_reputation', type: 'varchar', from: 'tokenReputation', doc: 'Malicious, Benign, or NULL when unknown (rated on the C-Chain only)' },
    ...VALUE_COLUMNS,
  ],
};
