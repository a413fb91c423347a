import type { StreamDecl } from '../decl/stream.js';

export const btcbBridgers: StreamDecl = {
  table: 'btcb_bridgers',
  doc: 'the C-Chain addresses that bridged at least a threshold of BTC.b, from the metrics service: the listing as of the run',
  service: 'metrics',
  endpoint: '/v2/chains/43114/btcb/bridged:getAddresses',
  items: 'addresses',
  weight: 50,
  pageSize: { min: 1, max: 5000, default: 5000 },
  options: {
    thresholds: { kind: 'string[]', required: true, doc: 'thresholds, a listing each: whole numbers as the service takes them (BTC.b in satoshis)' },
  },
  check: (s) => {
    const out: Array<[string, string]> = [];
    (s.thresholds as string[]).forEach((t, i) => {
      if (!/^[0-9]{1,30}$/.test(t)) out.push([`thresholds[${i}]`, `${JSON.stringify(t)} is not a whole number (satoshis of BTC.b)`]);
    });
    return out;
  },
  partitions: (s) => (s.thresholds as string[]).map((threshold) => ({ id: `threshold=${threshold}`, path: {}, query: { threshold }, values: { threshold } })),
  // The listing is who has bridged so much now: a complete fetch replaces the partition.
  refresh: 'replace',
  mergeScope: 'partition',
  key: ['threshold', 'address'],
  columns: [
    { name: 'threshold', type: 'varchar', partition: 'threshold', doc: 'the threshold asked (as given in the pipeline)' },
    { name: 'address', type: 'evm_address', from: 'address', required: true, doc: 'C-Chain address, lowercased' },
    { name: 'sort_key', type: 'varchar', from: 'sortKey', required: true, doc: "the item's sort key as sent (unpublished meaning; the simulator sends the satoshis bridged)" },
  ],
};
