// network_details (snapshots of the primary network's staking totals) against the simulator: each
// snapshot equal to the sums over the active validations the same lake lands at the same time
// (one world), amounts exact, a rerun adding a snapshot, every answer accepted by the
// official client's schema.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import { runPipeline } from '../../src/pipeline/run.js';
import type { RunReport } from '../../src/pipeline/report.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { PRIMARY_NETWORK_ID } from '../../src/simulator/subnets.js';
import { DEMO } from '../../src/simulator/world.js';
import { officialProblems } from '../official.js';
import { expectCleanRun, lakeRows as rows, quiet, runAtTimes } from '../helpers.js';

const DAY = 86_400;
const SEED = 11;

function pipeline(url: string): Pipeline {
  const p = loadPipeline('pipelines/demo.yaml');
  for (const s of Object.values(p.sources)) s.url = url;
  p.streams = [
    { table: 'network_details', network: 'mainnet' },
    { table: 'network_details', network: 'fuji' },
    { table: 'validators', network: 'mainnet', validationStatus: 'active', subnetId: PRIMARY_NETWORK_ID },
  ];
  return p;
}

describe('network_details as snapshots', () => {
  const clock = { t: DEMO.now as number };
  let sim: Simulator;
  let p: Pipeline;
  const lake = mkdtempSync(join(tmpdir(), 'cl-netdetails-'));
  const reports: RunReport[] = [];
  // Both runs on one UTC day whatever the hour the suite starts (the daily query's test counts days).
  const wall0 = Math.floor(Date.now() / 1000 / DAY) * DAY + 60;
  const runs = [
    { world: DEMO.now, wall: wall0 },
    { world: DEMO.now + 3 * DAY, wall: wall0 + 3600 },
  ];

  beforeAll(async () => {
    sim = await startSimulator({ seed: SEED, worldNow: () => clock.t });
    p = pipeline(sim.url);
    for (const r of runs) reports.push(await runAtTimes(clock, r.world, r.wall, () => runPipeline(p, { lake, logger: quiet })));
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('completes every partition without rejects or unknown fields', () => {
    for (const r of reports) expectCleanRun(r, { drift: false });
  });

  it('one row a network a run; the totals are the sums over the active validations landed at the same time', async () => {
    const snaps = await rows(lake, `SELECT network, epoch(snapshot_at)::BIGINT taken, validator_count, validator_amount_staked_raw vs, estimated_annual_staking_reward_raw er,
      delegator_count, delegator_amount_staked_raw ds, staking_ratio, staking_by_version FROM network_details ORDER BY network, taken`);
    expect(snaps.map((r) => `${r.network}@${r.taken}`)).toEqual([...runs.map((r) => `fuji@${r.wall}`), ...runs.map((r) => `mainnet@${r.wall}`)]);
    for (const { wall } of runs) {
      const [v] = await rows(lake, `SELECT count(*) n, sum(amount_staked)::VARCHAR staked, (sum(validation_reward_amount) + sum(delegation_reward_amount))::VARCHAR rewards,
          sum(delegator_count) dn, sum(amount_delegated)::VARCHAR delegated FROM validators WHERE epoch(snapshot_at) = ${wall}`);
      const s = snaps.find((r) => r.network === 'mainnet' && Number(r.taken) === wall)!;
      expect(Number(v!.n)).toBeGreaterThan(0);
      expect([s.validator_count, s.vs, s.er]).toEqual([Number(v!.n), v!.staked, v!.rewards]);
      expect(s.delegator_count).toBeGreaterThan(0);
      expect([s.delegator_count, s.ds]).toEqual([Number(v!.dn), v!.delegated]);
      // Per version: the counts and stakes add up to the totals.
      const versions = JSON.parse(s.staking_by_version) as Array<{ version: string; amountStaked: string; validatorCount: number }>;
      expect(versions.length).toBeGreaterThan(1);
      expect(versions.reduce((n, x) => n + x.validatorCount, 0)).toBe(s.validator_count);
      expect(versions.reduce((n, x) => n + BigInt(x.amountStaked), 0n).toString()).toBe(s.vs);
      expect(s.staking_ratio).toMatch(/^0\.[0-9]{6}$/);
    }
  });

  it('sql/network_staking_daily.sql: the newest snapshot of each day, its change on the day before', async () => {
    const got = await rows(lake, readFileSync('sql/network_staking_daily.sql', 'utf8'));
    const mainnet = got.filter((r) => r.network === 'mainnet');
    expect(mainnet).toHaveLength(1);
    const [s] = await rows(lake, `SELECT validator_count, (validator_amount_staked + delegator_amount_staked)::VARCHAR total FROM network_details WHERE network = 'mainnet' ORDER BY snapshot_at DESC LIMIT 1`);
    expect([mainnet[0]!.validators, String(mainnet[0]!.total_staked_nanoavax)]).toEqual([s!.validator_count, s!.total]);
  });

  it('a rerun in the same second adds nothing; the key is unique', async () => {
    const [k] = await rows(lake, `SELECT count(*) n, count(DISTINCT (network, snapshot_at)) d FROM network_details`);
    expect(k!.n).toBe(k!.d);
    await runAtTimes(clock, runs[1]!.world, runs[1]!.wall, () => runPipeline(p, { lake, logger: quiet }));
    const [k2] = await rows(lake, `SELECT count(*) n FROM network_details`);
    expect(k2!.n).toBe(k!.n);
  });

  it('the answer is accepted by the official client', async () => {
    for (const network of ['mainnet', 'fuji']) {
      const r = await fetch(`${sim.url}/v1/networks/${network}`);
      expect(r.status).toBe(200);
      expect(officialProblems('networkDetails', await r.json())).toBe('');
    }
  });
});
