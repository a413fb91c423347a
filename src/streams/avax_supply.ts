import type { Page } from '../decl/request.js';
import type { Column, ExtractContext, StreamDecl } from '../decl/stream.js';
import { RunError } from '../errors.js';
import { ExactNumber } from '../json.js';
import { stamped } from './chain_reads.js';

/** One GET a run: the answer (one object) as the service has it now, stamped with when chainlake asked. */
export async function* objectSnapshot(x: ExtractContext): AsyncGenerator<Page> {
  const takenAt = Math.floor(Date.now() / 1000);
  const body = await x.client.get(x.path, {}, { endpoint: x.endpoint, stats: x.stats, signal: x.signal, weight: x.weight, flow: x.flow, exact: x.exact });
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new RunError(`${x.endpoint}: the answer is not an object`);
  yield { items: stamped([body], { takenAt }) };
}

/** A decimal amount of AVAX: digits, maybe a point and more digits. */
const DECIMAL = /^[0-9]+(\.[0-9]+)?$/;

/**
 * AVAX amounts come as decimal text with up to about 19 fractional digits, more than nAVAX (9)
 * or any fixed DECIMAL scale the others need: landed as the text, exactly, after checking it is a
 * decimal (a JSON number is taken by its text, also exact); a row with anything else is rejected.
 */
function avax(name: string, field: string, doc: string): Column {
  return {
    name,
    type: 'varchar',
    derive: (item) => {
      const v = item[field];
      const text = typeof v === 'string' ? v : v instanceof ExactNumber ? v.text : undefined;
      // Not a decimal: an object the column's string check rejects, naming what was sent.
      return text === undefined || DECIMAL.test(text) ? text : { 'not a decimal': text };
    },
    required: true,
    doc: `${doc}, AVAX as exact decimal text (CAST to DECIMAL(38,18) or wider to compute)`,
  };
}

export const avaxSupply: StreamDecl = {
  table: 'avax_supply',
  doc: 'AVAX supply (total, circulating, burned per chain, staked, locked, rewards, L1 validator fees): one snapshot per run, so the history accrues',
  service: 'data',
  endpoint: '/v1/avax/supply',
  items: 'supply',
  extract: objectSnapshot,
  weight: 1,
  // Amounts are decimal strings; a JSON number in their place would be kept as sent.
  exactNumbers: true,
  pageSize: { min: 0, max: 0, default: 0 },
  options: {},
  partitions: () => [{ id: 'supply', path: {}, query: {}, values: {} }],
  refresh: 'merge',
  mergeScope: 'partition',
  key: ['snapshot_at'],
  keyDoc: 'a snapshot per run: each run adds one; a run within the same second replaces it',
  knownFields: ['circulatingSupply', 'totalSupply', 'totalPBurned', 'totalCBurned', 'totalXBurned', 'totalStaked', 'totalLocked', 'totalRewards', 'genesisUnlock', 'l1ValidatorFees'],
  columns: [
    { name: 'snapshot_at', type: 'timestamptz', from: '_snapshot.takenAt', required: true, stamp: true, doc: 'when chainlake took the snapshot (UTC)' },
    {
      name: 'last_updated', type: 'timestamptz', required: true, doc: 'when the service last updated the figures (UTC, to the second; last_updated_text has it as sent)',
      derive: (item) => {
        const ms = typeof item.lastUpdated === 'string' ? Date.parse(item.lastUpdated) : NaN;
        return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined;
      },
    },
    { name: 'last_updated_text', type: 'varchar', from: 'lastUpdated', required: true, doc: 'lastUpdated as sent (ISO 8601, with milliseconds)' },
    avax('total_supply', 'totalSupply', 'total supply'),
    avax('circulating_supply', 'circulatingSupply', 'circulating supply'),
    avax('total_p_burned', 'totalPBurned', 'burned on the P-Chain (fees, excess inputs and L1 validator fees)'),
    avax('total_c_burned', 'totalCBurned', 'burned on the C-Chain (EVM and atomic transactions)'),
    avax('total_x_burned', 'totalXBurned', 'burned on the X-Chain'),
    avax('total_staked', 'totalStaked', 'staked'),
    avax('total_locked', 'totalLocked', 'locked'),
    avax('total_rewards', 'totalRewards', 'staking rewards to date'),
    avax('genesis_unlock', 'genesisUnlock', 'unlocked at genesis'),
    avax('l1_validator_fees', 'l1ValidatorFees', 'L1 validator fees to date'),
  ],
};
