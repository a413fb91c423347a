// The validator tables (validators, l1_validators: snapshots; staking_metrics: a series) against
// a clocked simulator: each table compared row for row with what the world served at the time of
// the run, a second run a few days on adding a snapshot (and only the new points of a series), the
// validators agreeing with the delegators table, and every answer the simulator gives accepted by
// the official client's response schemas.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ListL1ValidatorsResponse$inboundSchema, ListValidatorDetailsResponse$inboundSchema, MetricsApiResponse$inboundSchema,
} from '@avalanche-sdk/chainkit/models/components';
import { checkPipeline, loadPipeline, type Pipeline } from '../../src/config/pipeline.js';
import type { StreamConfig } from '../../src/decl/stream.js';
import { rebuildTable } from '../../src/pipeline/rebuild.js';
import { runPipeline } from '../../src/pipeline/run.js';
import type { RunReport } from '../../src/pipeline/report.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { LAKESIDE_SUBNET_ID, PRIMARY_NETWORK_ID } from '../../src/simulator/subnets.js';
import { STAKING_METRICS, validatorWorld, type ValidatorDetails, type ValidatorQuery } from '../../src/simulator/validators.js';
import { DEMO } from '../../src/simulator/world.js';
import { validators as validatorsDecl } from '../../src/streams/validators.js';
import { expectCleanRun, lakeRows as rows, line, quiet, sorted, runAtTimes } from '../helpers.js';

const DAY = 86_400;
const tmp = () => mkdtempSync(join(tmpdir(), 'cl-validators-'));
const FROM = DEMO.now - 20 * DAY;

// Small pages, so that a snapshot spans several.
const STREAMS: StreamConfig[] = [
  { table: 'validators', network: 'mainnet', pageSize: 7 },
  { table: 'validators', network: 'mainnet', validationStatus: 'active', minUptimePerformance: 90, nodeIds: [DEMO.nodeIds[0], DEMO.nodeIds[1]] },
  { table: 'l1_validators', network: 'mainnet', includeInactiveL1Validators: true, pageSize: 3 },
  { table: 'staking_metrics', network: 'mainnet', metrics: [...STAKING_METRICS], subnetIds: [PRIMARY_NETWORK_ID, LAKESIDE_SUBNET_ID], startTimestamp: FROM },
  { table: 'delegators', network: 'mainnet' },
];

function pipeline(url: string): Pipeline {
  const p = loadPipeline('pipelines/demo.yaml');
  for (const s of Object.values(p.sources)) s.url = url;
  p.streams = STREAMS;
  return p;
}

/** What a validators row says, from the item the world serves. */
function validatorLine(at: number, v: ValidatorDetails): string {
  const o = v as ValidatorDetails & Record<string, any>;
  const rewards = o.rewards ?? o.potentialRewards;
  return line(
    at, v.txHash, v.nodeId, v.subnetId, v.validationStatus, v.amountStaked, v.delegationFee, v.startTimestamp, v.endTimestamp, v.blsCredentials?.publicKey,
    o.delegatorCount, o.amountDelegated, o.delegationCapacity, o.stakePercentage, o.uptimePerformance, o.avalancheGoVersion,
    rewards?.validationRewardAmount, rewards?.delegationRewardAmount, rewards?.rewardAddresses, o.rewards?.rewardTxHash,
    o.potentialRewards ? true : o.rewards ? false : undefined, o.validatorHealth?.reachabilityPercent, o.validatorHealth?.benchedCChainRequestsPercent,
    o.geolocation?.city, o.geolocation?.latitude, o.removeTxHash, o.removeTimestamp,
  );
}

const VALIDATOR_SQL = `SELECT epoch(snapshot_at)::BIGINT taken, tx_hash, node_id, subnet_id, validation_status, amount_staked_raw, delegation_fee_percent,
  epoch(start_timestamp)::BIGINT s, epoch(end_timestamp)::BIGINT e, bls_public_key, delegator_count, amount_delegated_raw, delegation_capacity_raw,
  stake_percentage, uptime_performance, avalanche_go_version, validation_reward_amount_raw, delegation_reward_amount_raw, reward_addresses, reward_tx_hash,
  rewards_are_potential, reachability_percent, benched_c_chain_requests_percent, geo_city, geo_latitude, remove_tx_hash, epoch(remove_timestamp)::BIGINT r
  FROM validators`;

const rowLine = (r: Record<string, any>) =>
  line(
    r.taken, r.tx_hash, r.node_id, r.subnet_id, r.validation_status, r.amount_staked_raw, r.delegation_fee_percent, r.s, r.e, r.bls_public_key, r.delegator_count,
    r.amount_delegated_raw, r.delegation_capacity_raw, r.stake_percentage, r.uptime_performance, r.avalanche_go_version, r.validation_reward_amount_raw,
    r.delegation_reward_amount_raw, r.reward_addresses, r.reward_tx_hash, r.rewards_are_potential, r.reachability_percent, r.benched_c_chain_requests_percent,
    r.geo_city, r.geo_latitude, r.remove_tx_hash, r.r,
  );

describe('validator tables on a clocked world', () => {
  const clock = { t: DEMO.now as number };
  let sim: Simulator;
  let lake: string;
  let p: Pipeline;
  const reports: RunReport[] = [];
  /** When each run's snapshot was taken (the faked wall clock) and the world's time then. */
  const runs: Array<{ taken: number; world: number }> = [];
  const wall0 = Math.floor(Date.now() / 1000);

  async function runAt(worldTime: number, wall: number): Promise<void> {
    reports.push(await runAtTimes(clock, worldTime, wall, () => runPipeline(p, { lake, logger: quiet })));
    runs.push({ taken: wall, world: worldTime });
  }

  beforeAll(async () => {
    sim = await startSimulator({ seed: 7, worldNow: () => clock.t });
    lake = tmp();
    p = pipeline(sim.url);
    await runAt(DEMO.now, wall0);
    // Three days on: the pending subnet validation has started, an L1 validator has run dry.
    await runAt(DEMO.now + 3 * DAY, wall0 + 3 * DAY);
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('completes every partition without rejects or unknown fields, both runs', () => {
    for (const r of reports) expectCleanRun(r, { drift: false });
  });

  it('validators: every validation of each snapshot, as the world served it then, in every variant', async () => {
    const w = validatorWorld(sim.world);
    const want = runs.flatMap(({ taken, world }) => [...iterateAll(w.listValidators('mainnet', {}, world))].map((v) => validatorLine(taken, v)));
    const filter: ValidatorQuery = { validationStatus: 'active', minUptimePerformance: 90, nodeIds: [DEMO.nodeIds[0], DEMO.nodeIds[1]] };
    const wantFiltered = runs.flatMap(({ taken, world }) => [...iterateAll(w.listValidators('mainnet', filter, world))].map((v) => validatorLine(taken, v)));
    const got = (await rows(lake, VALIDATOR_SQL)).map(rowLine);
    // The filtered entry's rows are rows of the whole listing's snapshot (taken in the same second):
    // one row per validation and snapshot, whichever entry listed it.
    expect(sorted(got)).toEqual(sorted(want));
    expect(wantFiltered.length).toBeGreaterThan(0);
    expect(wantFiltered.length).toBeLessThan(want.length / 2);
    for (const f of wantFiltered) expect(want).toContain(f);
    for (const t of ['validators', 'l1_validators']) {
      const [k] = await rows(lake, `SELECT count(*) n, count(DISTINCT (network, snapshot_at, ${t === 'validators' ? 'tx_hash' : 'validation_id'})) keys FROM ${t}`);
      expect(k!.keys, t).toBe(k!.n);
    }
    const statuses = await rows(lake, `SELECT DISTINCT validation_status s FROM validators ORDER BY 1`);
    expect(statuses.map((r) => r.s)).toEqual(['active', 'completed', 'pending', 'removed']);
    // Two snapshots; the second sees the pending subnet validations active.
    const moved = await rows(lake, `SELECT epoch(snapshot_at)::BIGINT taken, count(*) FILTER (WHERE validation_status = 'pending') pending FROM validators WHERE subnet_id <> '${PRIMARY_NETWORK_ID}' GROUP BY 1 ORDER BY 1`);
    expect(moved).toEqual([{ taken: String(runs[0]!.taken), pending: '2' }, { taken: String(runs[1]!.taken), pending: '0' }]);
    const [types] = await rows(lake, `SELECT typeof(amount_staked) a, typeof(stake_percentage) d, typeof(delegator_count) c, count(*) FILTER (WHERE amount_staked::VARCHAR <> amount_staked_raw) mismatched FROM validators GROUP BY ALL`);
    expect(types).toEqual({ a: 'BIGNUM', d: 'DOUBLE', c: 'INTEGER', mismatched: '0' });
  });

  it('validators agree with the delegators table: count and stake of the delegations running at the snapshot', async () => {
    // The delegators table merges each run's listing by key, so its statuses are those of the newest run.
    const got = await rows(lake, `
      WITH v AS (SELECT node_id, delegator_count, amount_delegated FROM validators
                 WHERE validation_status = 'active' AND subnet_id = '${PRIMARY_NETWORK_ID}' AND epoch(snapshot_at) = ${runs[1]!.taken}),
           d AS (SELECT node_id, count(*) n, sum(amount_delegated) amt FROM delegators WHERE delegation_status = 'active' GROUP BY ALL)
      SELECT count(*) validators, count(*) FILTER (WHERE v.delegator_count = coalesce(d.n, 0) AND v.amount_delegated = coalesce(d.amt, 0)) agree,
             sum(v.delegator_count) delegations
      FROM v LEFT JOIN d USING (node_id)`);
    expect(Number(got[0]!.validators)).toBe(sim.world.validators('mainnet').length);
    expect(got[0]!.agree).toBe(got[0]!.validators);
    expect(Number(got[0]!.delegations)).toBeGreaterThan(0);
  });

  it('l1_validators: every L1 validator of each snapshot with its P-Chain height, weights and balances exact', async () => {
    const w = validatorWorld(sim.world);
    const want = runs.flatMap(({ taken, world }) =>
      [...iterateAll(w.listL1Validators('mainnet', { includeInactiveL1Validators: true }, world))].map((v) =>
        line(taken, w.pChainHeight(world), v.validationId, v.validationIdHex, v.nodeId, v.subnetId, String(v.weight), String(v.remainingBalance), v.creationTimestamp, v.blsCredentials.publicKey, v.remainingBalanceOwner.addresses, v.deactivationOwner.threshold),
      ),
    );
    const got = (
      await rows(lake, `SELECT epoch(snapshot_at)::BIGINT taken, block_height, validation_id, validation_id_hex, node_id, subnet_id, weight_raw, remaining_balance_raw,
        epoch(creation_timestamp)::BIGINT c, bls_public_key, remaining_balance_owner_addresses, deactivation_owner_threshold FROM l1_validators`)
    ).map((r) => line(r.taken, r.block_height, r.validation_id, r.validation_id_hex, r.node_id, r.subnet_id, r.weight_raw, r.remaining_balance_raw, r.c, r.bls_public_key, r.remaining_balance_owner_addresses, r.deactivation_owner_threshold));
    expect(sorted(got)).toEqual(sorted(want));
    // 2^53 + 1 and a balance past 2^53 kept to the digit, as text and as DECIMAL.
    const [big] = await rows(lake, `SELECT count(*) FILTER (WHERE weight_raw = '9007199254740993' AND weight::VARCHAR = weight_raw) w,
      count(*) FILTER (WHERE length(remaining_balance_raw) >= 17 AND remaining_balance::VARCHAR = remaining_balance_raw) b,
      count(*) FILTER (WHERE remaining_balance_raw = '0') dry FROM l1_validators`);
    const l1s = Number((await rows(lake, `SELECT count(DISTINCT subnet_id) n FROM l1_validators`))[0]!.n);
    expect(l1s).toBeGreaterThan(1);
    expect(big).toMatchObject({ w: '2', b: String(2 * l1s) });
    // A validator of each L1 ran dry between the runs: the second snapshot lists it with a zero balance.
    const dry = await rows(lake, `SELECT epoch(snapshot_at)::BIGINT taken, count(*) n FROM l1_validators WHERE remaining_balance_raw = '0' GROUP BY 1 ORDER BY 1`);
    expect(Number(dry[1]!.n)).toBe(Number(dry[0]!.n) + l1s);
  });

  it('staking_metrics: every daily point of every subnet and metric, weights exact, the rerun fetching from the newest point', async () => {
    const w = validatorWorld(sim.world);
    const at = runs[1]!.world;
    const want: string[] = [];
    for (const subnet of [PRIMARY_NETWORK_ID, LAKESIDE_SUBNET_ID])
      for (const m of STAKING_METRICS)
        for (const pt of iterateAll(w.listStakingMetric('mainnet', m, subnet, { startTimestamp: FROM }, at))) want.push(line(subnet, m, pt.timestamp, String(pt.value)));
    const got = (await rows(lake, `SELECT subnet_id, metric, epoch(timestamp)::BIGINT t, value_text FROM staking_metrics`)).map((r) => line(r.subnet_id, r.metric, r.t, r.value_text));
    expect(sorted(got)).toEqual(sorted(want));
    expect(got.length).toBe(2 * 4 * (Math.floor(at / DAY) - Math.ceil(FROM / DAY) + 1));
    // The Lakeside L1 weighs more than 2^53: its digits survive as text.
    const [exact] = await rows(lake, `SELECT count(*) n FROM staking_metrics WHERE metric = 'validatorWeight' AND subnet_id = '${LAKESIDE_SUBNET_ID}' AND value_text::HUGEINT > 9007199254740992 AND value_text::HUGEINT::VARCHAR = value_text`);
    expect(Number(exact!.n)).toBeGreaterThan(0);
    // The second run asked from the newest point of the first: one request per partition, few points.
    const s = reports[1]!.streams.find((x) => x.table === 'staking_metrics')!;
    expect(s.requests).toBe(8);
    expect(s.rows).toBe(8 * 4);
  });

  it('every answer fits the official client: each variant of validator, L1 validators, staking series', async () => {
    clock.t = DEMO.now;
    const fetchJson = async (path: string) => {
      const r = await fetch(sim.url + path);
      expect(r.status, path).toBe(200);
      return JSON.parse(await r.text()) as Record<string, unknown>;
    };
    const parsed = (schema: { safeParse(x: unknown): { success: boolean; error?: { issues: unknown } } }, body: unknown, what: string) => {
      const r = schema.safeParse(body);
      if (!r.success) console.error(what, JSON.stringify(r.error!.issues, null, 1));
      expect(r.success, what).toBe(true);
    };
    // Each status, of the primary network and of a subnet, with and without a geolocation and BLS credentials.
    const seen = new Set<string>();
    for (const status of ['completed', 'active', 'pending', 'removed']) {
      const body = await fetchJson(`/v1/networks/mainnet/validators?validationStatus=${status}&pageSize=100`);
      const items = body.validators as Array<Record<string, unknown>>;
      expect(items.length, status).toBeGreaterThan(0);
      for (const v of items) {
        seen.add(`${v.validationStatus}:${v.subnetId === PRIMARY_NETWORK_ID ? 'primary' : 'subnet'}`);
        if (v.validationStatus === 'active') seen.add(`geolocation:${v.geolocation === null ? 'null' : 'set'}`);
        seen.add(`bls:${v.blsCredentials === undefined ? 'none' : 'set'}`);
      }
      parsed(ListValidatorDetailsResponse$inboundSchema, body, `validators ${status}`);
    }
    expect([...seen].sort()).toEqual(expect.arrayContaining([
      'active:primary', 'active:subnet', 'bls:none', 'bls:set', 'completed:primary', 'completed:subnet', 'geolocation:null', 'geolocation:set', 'pending:subnet', 'removed:subnet',
    ]));
    parsed(ListL1ValidatorsResponse$inboundSchema, await fetchJson('/v1/networks/mainnet/l1Validators?includeInactiveL1Validators=true&pageSize=100'), 'l1Validators');
    parsed(ListL1ValidatorsResponse$inboundSchema, await fetchJson('/v1/networks/fuji/l1Validators'), 'l1Validators fuji');
    for (const m of STAKING_METRICS) parsed(MetricsApiResponse$inboundSchema, await fetchJson(`/v2/networks/mainnet/metrics/${m}?subnetId=${LAKESIDE_SUBNET_ID}&pageSize=5`), `staking ${m}`);
  });

  it('a rebuild from the raw pages lands the same snapshots (the stamp travels with the items)', async () => {
    const all = (t: string) => rows(lake, `SELECT * EXCLUDE (network) FROM ${t} ORDER BY ALL`);
    for (const t of ['validators', 'l1_validators']) {
      const before = await all(t);
      const r = await rebuildTable(lake, t, { logger: quiet });
      expect(r.rows, t).toBe(before.length);
      expect(await all(t), t).toEqual(before);
    }
  });

  it('the simulator refuses bad parameters with a 400 naming each', async () => {
    const bad = async (path: string, name: RegExp) => {
      const r = await fetch(sim.url + path);
      expect(r.status, path).toBe(400);
      // The metrics service sends its messages as a list.
      expect([(await r.json()).message].flat().join('; '), path).toMatch(name);
    };
    await bad('/v1/networks/mainnet/validators?validationStatus=gone', /validationStatus must be one of: completed, active, pending, removed/);
    await bad('/v1/networks/mainnet/validators?subnetId=abc', /subnetId must be an id/);
    await bad('/v1/networks/mainnet/validators?minDelegationCapacity=720000000000000001', /minDelegationCapacity must be an amount/);
    await bad('/v1/networks/mainnet/validators?maxUptimePerformance=101', /maxUptimePerformance must not be greater than 100/);
    await bad('/v1/networks/mainnet/validators?minFeePercentage=1', /minFeePercentage must not be less than 2/);
    await bad('/v1/networks/mainnet/validators?pageSize=101', /pageSize must not be greater than 100/);
    await bad('/v1/networks/moonnet/validators', /network must be one of/);
    await bad('/v1/networks/mainnet/l1Validators?nodeId=NodeID-x', /nodeId: "NodeID-x"/);
    await bad('/v1/networks/mainnet/l1Validators?includeInactiveL1Validators=yes', /includeInactiveL1Validators must be true or false/);
    await bad('/v1/networks/mainnet/l1Validators?l1ValidationId=0x12', /l1ValidationId must be an id/);
    await bad('/v2/networks/mainnet/metrics/stakeCount', /metric must be one of: delegatorCount, delegatorWeight, validatorCount, validatorWeight/);
    await bad('/v2/networks/mainnet/metrics/validatorCount?startTimestamp=10&endTimestamp=5', /startTimestamp must not be greater than endTimestamp/);
  });
});

describe('configuration of the validator tables', () => {
  const check = (stream: Record<string, unknown>) => () => checkPipeline({ name: 'x', streams: [stream] }, 'x.yaml');

  it('names the place of every bad value', () => {
    expect(check({ table: 'validators' })).toThrow(/x\.yaml: streams\[0\]\.network: is required for validators/);
    expect(check({ table: 'validators', network: 'mainnet', validationStatus: 'gone' })).toThrow(/streams\[0\]\.validationStatus: "gone" is not one of completed, active, pending, removed/);
    expect(check({ table: 'validators', network: 'mainnet', nodeIds: ['NodeID-x'] })).toThrow(/streams\[0\]\.nodeIds\[0\]: "NodeID-x" is not a NodeID/);
    expect(check({ table: 'validators', network: 'mainnet', subnetId: 'P' })).toThrow(/streams\[0\]\.subnetId: "P" is not an id \(cb58 of 32 bytes\)/);
    expect(check({ table: 'validators', network: 'mainnet', minDelegationCapacity: '720000000000000001' })).toThrow(/streams\[0\]\.minDelegationCapacity: "720000000000000001" is not an amount in nAVAX from 0 to 720000000000000000/);
    expect(check({ table: 'validators', network: 'mainnet', minDelegationCapacity: '5', maxDelegationCapacity: '4' })).toThrow(/streams\[0\]\.maxDelegationCapacity: minDelegationCapacity must not be above maxDelegationCapacity/);
    expect(check({ table: 'validators', network: 'mainnet', maxUptimePerformance: 100.5 })).toThrow(/streams\[0\]\.maxUptimePerformance: 100\.5 is out of bounds \(0 to 100\)/);
    expect(check({ table: 'validators', network: 'mainnet', minFeePercentage: 1 })).toThrow(/streams\[0\]\.minFeePercentage: must be at least 2, not 1/);
    expect(check({ table: 'validators', network: 'mainnet', minUptimePerformance: 'high' })).toThrow(/streams\[0\]\.minUptimePerformance: must be a number, not "high"/);
    expect(check({ table: 'validators', network: 'mainnet', maxTimeRemaining: 2147483648 })).toThrow(/streams\[0\]\.maxTimeRemaining: 2147483648 is out of bounds/);
    expect(check({ table: 'l1_validators', network: 'mainnet', nodeId: 'node-1' })).toThrow(/streams\[0\]\.nodeId: "node-1" is not a NodeID/);
    expect(check({ table: 'l1_validators', network: 'mainnet', l1ValidationId: 'x' })).toThrow(/streams\[0\]\.l1ValidationId: "x" is not an id/);
    expect(check({ table: 'staking_metrics', network: 'mainnet', metrics: ['validatorCount', 'txCount'] })).toThrow(/streams\[0\]\.metrics\[1\]: "txCount" is not a staking metric/);
    expect(check({ table: 'staking_metrics', network: 'mainnet', metrics: ['validatorCount'], subnetIds: ['x'] })).toThrow(/streams\[0\]\.subnetIds\[0\]: "x" is not an id/);
  });

  it('sends what the pipeline asks: filters in the query, numbers as written', () => {
    const p = checkPipeline({ name: 'x', streams: [{ table: 'validators', network: 'fuji', minUptimePerformance: 99.5, nodeIds: [DEMO.nodeIds[0]], minDelegationCapacity: '25000000000000' }] }, 'x.yaml');
    expect(validatorsDecl.partitions(p.streams[0]!)[0]!.query).toEqual({ minUptimePerformance: '99.5', nodeIds: DEMO.nodeIds[0], minDelegationCapacity: '25000000000000' });
  });
});

function* iterateAll<T>(l: { length: number; at(k: number): T }): IterableIterator<T> {
  for (let k = 0; k < l.length; k++) yield l.at(k);
}
