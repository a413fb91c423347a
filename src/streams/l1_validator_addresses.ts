import type { StreamDecl } from '../decl/stream.js';
import { timeRangeCheck, timeRangeQuery } from './common.js';

export const l1ValidatorAddresses: StreamDecl = {
  table: 'l1_validator_addresses',
  doc: 'the P-Chain addresses validating an L1 within a time range, from the metrics service (one row per address and validation)',
  service: 'metrics',
  endpoint: '/v2/subnets/{subnetId}/validators:getAddresses',
  items: 'addresses',
  explode: 'addresses',
  weight: 50,
  pageSize: { min: 1, max: 5000, default: 5000 },
  options: {
    network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
    subnetIds: { kind: 'cb58_id[]', required: true, doc: 'L1s (subnet ids), a listing each' },
    startTimestamp: { kind: 'unix_seconds', doc: 'validating at or after it; default since the L1 began' },
    endTimestamp: { kind: 'unix_seconds', doc: 'validating before it; default until now' },
  },
  check: timeRangeCheck,
  partitions: (s) => {
    const network = String(s.network);
    const query = { network, ...timeRangeQuery(s) };
    const range = `${s.startTimestamp ?? ''}-${s.endTimestamp ?? ''}`;
    return (s.subnetIds as string[]).map((subnetId) => ({
      id: `${network}/${subnetId}/${range}`, path: { subnetId }, query, values: { network, subnetId, range },
    }));
  },
  // The answer is who validated in the range as the service knows it now: a fetch replaces the
  // partition's rows (a range reaching into the future grows run by run).
  refresh: 'replace',
  mergeScope: 'partition',
  key: ['network', 'subnet_id', 'time_range', 'sort_key', 'address'],
  keyDoc: 'an address once per listed item (sort_key) of a partition',
  columns: [
    { name: 'network', type: 'varchar', partition: 'network', doc: 'mainnet, fuji or testnet' },
    { name: 'subnet_id', type: 'varchar', partition: 'subnetId', doc: 'the L1 (its subnet id)' },
    { name: 'time_range', type: 'varchar', partition: 'range', doc: "the pipeline's startTimestamp-endTimestamp (Unix seconds; empty where not given)" },
    { name: 'address', type: 'varchar', from: '_value', required: true, doc: 'a P-Chain address (avax1...) of the item' },
    { name: 'sort_key', type: 'varchar', from: '_parent.sortKey', required: true, doc: "the item's sort key as sent (unpublished meaning; the simulator sends the L1 validation id)" },
  ],
};
