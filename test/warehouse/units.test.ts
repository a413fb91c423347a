// Amounts in whole units (issue 37): beside every amount whose decimals are known, chainlake's SQL
// gives `<name>_units` = the amount / 10^decimals (a DOUBLE), NULL where the decimals are not
// known; the declarations say where the decimals are, and the bundled SQL reads them from there.
import { beforeAll, describe, expect, it } from 'vitest';
import { STREAMS } from '../../src/streams/index.js';
import { unitsOf } from '../../src/transform/columns.js';
import { sharedDemoLake } from '../lake-fixture.js';
import { lakeRows } from '../helpers.js';

let lake = '';
beforeAll(async () => {
  lake = await sharedDemoLake();
});

describe('amounts in whole units', () => {
  it('every amount that says its decimals names an integer column of its table, or a number', () => {
    let named = 0;
    for (const d of STREAMS)
      for (const u of unitsOf(d)) {
        if (typeof u.decimals === 'number') expect([9, 18], `${d.table}.${u.name}`).toContain(u.decimals);
        else {
          named++;
          expect(d.columns.find((c) => c.name === u.decimals)?.type, `${d.table}.${u.name}: ${u.decimals}`).toBe('integer');
        }
      }
    expect(named).toBeGreaterThan(5);
    // The tables an analyst sums first have them.
    for (const t of ['erc_transfers', 'address_token_transfers', 'address_tx_transfers', 'internal_transactions', 'erc20_balances', 'native_balances', 'historical_rewards', 'delegators', 'platform_balances'])
      expect(unitsOf(STREAMS.find((d) => d.table === t)!).length, t).toBeGreaterThan(0);
  });

  it('erc_transfers.value_units is value / 10^token_decimals, NULL without decimals or a value; internal value in AVAX', async () => {
    const rows = await lakeRows(lake, `SELECT value_raw, token_decimals AS d, value_units AS u FROM erc_transfers`);
    expect(rows.length).toBeGreaterThan(100);
    let compared = 0;
    for (const r of rows) {
      if (r.value_raw === null || r.d === null) {
        expect(r.u).toBeNull();
        continue;
      }
      const want = Number(r.value_raw) / 10 ** r.d;
      expect(Math.abs(r.u - want) <= Math.abs(want) * 1e-12, `${r.value_raw} / 10^${r.d}: ${r.u}`).toBe(true);
      compared++;
    }
    expect(compared).toBeGreaterThan(100);
    const internal = await lakeRows(lake, `SELECT count(*)::INT AS n, count(*) FILTER (WHERE abs(value_units - CAST(value_raw AS DOUBLE) / 1e18) > abs(value_units) * 1e-12)::INT AS off FROM internal_transactions`);
    expect(internal[0]!.n).toBeGreaterThan(0);
    expect(internal[0]!.off).toBe(0);
    const staked = await lakeRows(lake, `SELECT count(*)::INT AS n, count(*) FILTER (WHERE abs(amount_delegated_units - CAST(amount_delegated_raw AS DOUBLE) / 1e9) > abs(amount_delegated_units) * 1e-12)::INT AS off FROM delegators`);
    expect(staked[0]!.n).toBeGreaterThan(0);
    expect(staked[0]!.off).toBe(0);
  });
});
