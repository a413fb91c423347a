// Every bundled query gives the same rows whatever the session's time zone: a query that puts rows
// in days, weeks or months does it in UTC, as each says. Two zones 26 hours apart: for any instant,
// its date in one of them is not its UTC date, so a day taken in the session's zone shows whatever
// hour of the day the lake's snapshots and blocks were taken at (a snapshot's time is the run's).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledQueries, openWarehouse } from '../../src/warehouse/views.js';
import { query } from '../../src/warehouse/query.js';
import type { DuckDBConnection } from '../../src/warehouse/duckdb.js';
import { sharedDemoLake } from '../lake-fixture.js';

const ZONES = ['Pacific/Kiritimati', 'Etc/GMT+12'];

describe('the bundled queries in any time zone', () => {
  let conn: DuckDBConnection;
  beforeAll(async () => {
    conn = await openWarehouse(await sharedDemoLake());
  });
  afterAll(() => conn?.closeSync());

  it('give the rows they give in UTC, in UTC+14 and UTC-12', async () => {
    const queries = bundledQueries();
    expect(queries.length).toBeGreaterThan(10);
    const inZone = async (zone: string) => {
      await conn.run(`SET TimeZone = '${zone}'`);
      const out: Record<string, unknown[]> = {};
      for (const q of queries) out[q.name] = (await query(conn, q.sql)).rows;
      return out;
    };
    const utc = await inZone('UTC');
    expect(Object.values(utc).filter((rows) => rows.length > 0).length).toBeGreaterThan(10);
    for (const zone of ZONES) {
      const got = await inZone(zone);
      for (const q of queries) expect(got[q.name], `${q.file} in ${zone}`).toEqual(utc[q.name]);
    }
  });
});
