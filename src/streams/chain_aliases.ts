import type { Page } from '../decl/request.js';
import type { ExtractContext, StreamDecl } from '../decl/stream.js';
import { ADMIN, CHAIN_SNAPSHOT, CHAIN_SNAPSHOT_COLUMNS, adminCall, blockchainIdOf, chainPartitions, fields, nodeSnapshot, ofChain, stamped } from './node_reads.js';

/** admin.getChainAliases takes a blockchain id, not an alias: an alias is resolved first. */
async function* aliasesPage(x: ExtractContext): AsyncGenerator<Page> {
  const snap = nodeSnapshot(x);
  const id = await blockchainIdOf(x, x.partition.path.chain!);
  const r = fields(await adminCall(x, 'admin.getChainAliases', { chain: id }), 'admin.getChainAliases');
  yield { items: stamped(ofChain([{ aliases: r.aliases }], id), snap) };
}

export const chainAliases: StreamDecl = {
  table: 'chain_aliases',
  doc: "the aliases the node knows each chain by (admin.getChainAliases; the admin API is off unless the node enables it, and a node without it is skipped with the reason in the run report), one row per chain per snapshot",
  ...CHAIN_SNAPSHOT,
  endpoint: ADMIN,
  methods: ['admin.getChainAliases'],
  items: 'aliases',
  extract: aliasesPage,
  options: {
    blockchainIds: { kind: 'blockchain_id[]', doc: 'blockchain ids (cb58) or the aliases P, X, C (default P, X, C); one partition each' },
  },
  partitions: (s) => chainPartitions(s, ['P', 'X', 'C']),
  key: ['node_url', 'snapshot_at', 'blockchain_id'],
  columns: [...CHAIN_SNAPSHOT_COLUMNS, { name: 'aliases', type: 'varchar[]', from: 'aliases', doc: 'the aliases (P, platform, ...; the id itself is one too), as the node lists them; NULL: the node runs no such chain' }],
};
