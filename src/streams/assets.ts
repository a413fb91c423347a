import type { Page } from '../decl/request.js';
import type { ExtractContext, StreamDecl } from '../decl/stream.js';
import { blockchainIdOf, fields, ofChain } from './node_reads.js';
import { CHAIN_COLUMN, assetCall } from './xvm_reads.js';

async function* assetPage(x: ExtractContext): AsyncGenerator<Page> {
  const { chain, asset } = x.partition.path as { chain: string; asset: string };
  const [id, r] = await Promise.all([blockchainIdOf(x, chain), assetCall(x, chain, 'getAssetDescription', { assetID: asset })]);
  yield { items: ofChain([fields(r, 'getAssetDescription')], id) };
}

export const assets: StreamDecl = {
  table: 'assets',
  doc: 'descriptions of listed assets of the asset chain (avm.getAssetDescription), one request per asset (dimension)',
  service: 'node',
  endpoint: '/ext/bc/{chain}',
  methods: ['avm.getAssetDescription'],
  items: 'asset',
  extract: assetPage,
  weight: 1,
  exactNumbers: true,
  pageSize: { min: 0, max: 0, default: 0 },
  options: {
    assetIds: { kind: 'cb58_id[]', required: true, doc: 'asset ids (cb58); one partition each' },
    blockchainIds: { kind: 'blockchain_id[]', doc: 'asset chains: X (default) or ids of chains running the same VM' },
  },
  partitions: (s) =>
    ((s.blockchainIds as string[] | undefined) ?? ['X']).flatMap((chain) =>
      (s.assetIds as string[]).map((asset) => ({ id: `${chain}/${asset}`, path: { chain, asset }, query: {}, values: {} })),
    ),
  refresh: 'merge',
  mergeScope: 'table',
  key: ['blockchain_id', 'asset_id'],
  columns: [
    CHAIN_COLUMN,
    { name: 'asset_id', type: 'varchar', from: 'assetID', required: true, doc: 'asset id (cb58)' },
    { name: 'name', type: 'varchar', from: 'name', required: true, doc: 'name' },
    { name: 'symbol', type: 'varchar', from: 'symbol', doc: 'symbol' },
    { name: 'denomination', type: 'integer', from: 'denomination', required: true, doc: 'decimal places used to display amounts (9: an amount of 10^9 is 1)' },
  ],
};
