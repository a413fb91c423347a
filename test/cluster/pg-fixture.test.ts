// The embedded PostgreSQL the cluster tests stand on: it answers SQL on loopback, keeps its data
// across a restart, and refuses connections while stopped.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres, type PgFixture } from '../pg-fixture.js';

describe('embedded PostgreSQL', () => {
  let db: PgFixture;
  beforeAll(async () => {
    db = await startPostgres();
  });
  afterAll(() => db?.close());

  it('answers on 127.0.0.1 and keeps its data across a restart', async () => {
    expect(new URL(db.url).hostname).toBe('127.0.0.1');
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    await c.query('CREATE TABLE t (n int)');
    await c.query('INSERT INTO t VALUES (42)');
    const { rows } = await c.query<{ v: number }>("SELECT current_setting('server_version_num')::int AS v");
    expect(rows[0]!.v).toBeGreaterThanOrEqual(140000);
    await c.end();

    await db.stop();
    const down = new pg.Client({ connectionString: db.url, connectionTimeoutMillis: 5000 });
    await expect(down.connect()).rejects.toThrow(/ECONNREFUSED/);
    await db.start();

    const again = new pg.Client({ connectionString: db.url });
    await again.connect();
    const back = await again.query<{ n: number }>('SELECT n FROM t');
    expect(back.rows).toEqual([{ n: 42 }]);
    await again.end();
  });
});
