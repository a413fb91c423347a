// chainlake's own spend: the data service's usage series and request log of the pipeline's API key
// (api_usage_metrics, api_logs). A pipeline runs against the simulator with a key, then the usage
// tables land and find its own requests there, row for row as the simulator served that key; the
// simulator's answers pass the official client's schemas; a rerun merges by key; and no form of the
// key lands anywhere, in the lake, the outputs or the service's answers.
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPipeline, type Pipeline } from '../../src/config/pipeline.js';
import type { StreamConfig } from '../../src/decl/stream.js';
import { runPipeline } from '../../src/pipeline/run.js';
import type { RunReport } from '../../src/pipeline/report.js';
import { WEIGHTS } from '../../src/simulator/ratelimit.js';
import { matchRoute } from '../../src/simulator/routes.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { intervalStart, isInvalid, type Caller, type LogEntry, type ServedRequest } from '../../src/simulator/usage.js';
import { DEMO } from '../../src/simulator/world.js';
import { StateStore } from '../../src/state/store.js';
import { expectCleanRun, lakeRows, line, quiet, recordingProxy, runCli, sorted } from '../helpers.js';
import { leakFinder } from '../leaks.js';
import { officialProblems } from '../official.js';

const KEY = 'sk-USAGE-5d1e8b-DO-NOT-LEAK';
const OTHER = 'sk-OTHER-0a9c2f-DO-NOT-LEAK';
const HEADER = 'x-glacier-api-key';
const leaks = leakFinder([KEY, OTHER]);
const tmp = () => mkdtempSync(join(tmpdir(), 'cl-usage-'));
const rows = lakeRows;
const BLOCKS_PATH = '/v1/networks/mainnet/blockchains/p-chain/blocks';
/**
 * The simulators' clock, stopped at noon UTC of the day before the test runs: every request falls
 * in one day, one hour and one minute whenever the test runs, a rate-limit window does not turn,
 * and no row is in the future (chainlake does not commit those).
 */
const T0 = (() => {
  const now = Date.now();
  return now - (now % 86_400_000) - 43_200_000;
})();
const clock = () => T0;

function pipeline(url: string, streams: StreamConfig[], apiKey: string | undefined = KEY): Pipeline {
  return checkPipeline({ name: 'usage', sources: { data: { url, ...(apiKey ? { apiKey } : {}) } }, streams }, 'usage.yaml');
}

/** The key's n of its first request to `path` at or after its `from`-th: where a listing of logs was frozen. */
function firstAt(requests: readonly ServedRequest[], path: string, from = 0): number {
  const r = requests.find((s) => s.path === path && s.n >= from);
  if (!r) throw new Error(`no request to ${path}`);
  return r.n;
}

const logLine = (e: LogEntry) =>
  line(e.logId, e.orgId, e.eventTimestamp, e.apiKeyId, e.apiKeyAlias, e.hostRegion, e.requestType, e.requestPath, e.apiCreditsConsumed, e.requestDurationMsecs,
    e.responseCode, e.chainId, e.metadata.ipAddress, e.metadata.host, e.metadata.userAgent);
const LOG_SQL = `SELECT log_id, org_id, epoch(event_timestamp)::BIGINT ts, api_key_id, api_key_alias, host_region, request_type, request_path, api_credits_consumed,
  request_duration_msecs, response_code, chain_id, ip_address, host, user_agent FROM api_logs`;
const logRow = (r: Record<string, any>) =>
  line(r.log_id, r.org_id, r.ts, r.api_key_id, r.api_key_alias, r.host_region, r.request_type, r.request_path, r.api_credits_consumed, r.request_duration_msecs,
    r.response_code, r.chain_id, r.ip_address, r.host, r.user_agent);

const INTERVAL_OF: Record<string, string> = { '1m': 'minute', '1h': 'hourly', '1d': 'daily', '1w': 'weekly', '1M': 'monthly' };
/** Every value of the usage answers the simulator served, as rows of the table (filters: '' for none). */
function servedUsage(answers: Answer[]): string[] {
  return answers.filter((a) => a.route === 'apiUsageMetrics' && a.status === 200).flatMap(({ body }: any) =>
    body.metrics.flatMap((m: any) => m.values.map((v: any) =>
      line(INTERVAL_OF[body.aggregateDuration], m.timestamp, v.groupedBy, v.groupValue, v.totalRequests, v.requestsPerSecond, v.successRatePercent,
        v.medianResponseTimeMsecs, v.invalidRequests, v.apiCreditsUsed, v.apiCreditsWasted))));
}
const USAGE_SQL = `SELECT time_interval, epoch(timestamp)::BIGINT ts, grouped_by, group_value, total_requests, requests_per_second, success_rate_percent,
  median_response_time_msecs, invalid_requests, api_credits_used, api_credits_wasted FROM api_usage_metrics`;
const usageRow = (r: Record<string, any>) =>
  line(r.time_interval, r.ts, r.grouped_by, r.group_value, r.total_requests, r.requests_per_second, r.success_rate_percent, r.median_response_time_msecs,
    r.invalid_requests, r.api_credits_used, r.api_credits_wasted);

interface Answer {
  route: string;
  status: number;
  body: unknown;
}

/** Every file under `dir`, with its bytes. */
function filesUnder(dir: string): Array<[string, Buffer]> {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile())
    .map((f) => [f, readFileSync(f)]);
}

describe('the key finds its own requests in its usage', () => {
  let sim: Simulator;
  let caller: Caller;
  const answers: Answer[] = [];
  let root: string;
  let lake: string;
  let data: RunReport;
  let logs: RunReport;
  let usage: RunReport;
  /** The key's first request of the logs run and of the usage run. */
  let logsFrom: number;
  let usageFrom: number;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 5, apiKeys: [KEY, OTHER], now: clock, onAnswer: (a) => answers.push(a) });
    root = tmp();
    lake = join(root, 'lake');
    data = await runPipeline(pipeline(sim.url, [{ table: 'chains' }, { table: 'platform_blocks', network: 'mainnet', startTimestamp: DEMO.now - 6 * 3600 }]), { lake, logger: quiet });
    // Neither another key's request nor an unkeyed one is this key's; a refused request is, its CU wasted.
    expect((await fetch(`${sim.url}/v1/chains`, { headers: { [HEADER]: OTHER } })).status).toBe(200);
    expect((await fetch(`${sim.url}/v1/chains`)).status).toBe(200);
    expect((await fetch(`${sim.url}/v1/networks/moon/blockchains/p-chain/blocks`, { headers: { [HEADER]: KEY } })).status).toBe(400);
    caller = sim.usage.caller(KEY);
    logsFrom = sim.usage.countOf(caller);
    // One listing of logs a run where the test needs to know where it was frozen (its first request).
    logs = await runPipeline(pipeline(sim.url, [{ table: 'api_logs', pageSize: 5 }]), { lake, logger: quiet });
    usageFrom = sim.usage.countOf(caller);
    usage = await runPipeline(pipeline(sim.url, [
      { table: 'api_usage_metrics', groupBy: 'requestPath' }, { table: 'api_usage_metrics', timeInterval: 'hourly', groupBy: 'responseCode' },
      { table: 'api_logs', responseCode: 400 },
    ]), { lake, logger: quiet });
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('completes every partition without rejects or drift', () => {
    for (const r of [data, logs, usage]) expectCleanRun(r, { drift: false });
  });

  it('api_logs holds every request the key made before the listing, row for row as served', async () => {
    const requests = sim.usage.requestsOf(caller);
    const upTo = firstAt(requests, '/v1/apiLogs', logsFrom);
    const all = sim.usage.logs(caller, {}, upTo);
    const want = Array.from({ length: all.length }, (_, k) => logLine(all.at(k)));
    const got = (await rows(lake, `${LOG_SQL} WHERE filters = ''`)).map(logRow);
    expect(sorted(got)).toEqual(sorted(want));
    expect(got.length).toBe(upTo);
    // The filtered entry: the one refused request, under its own filters beside the same log id.
    const refused = await rows(lake, `SELECT filters, request_path, response_code, api_credits_consumed FROM api_logs WHERE filters <> ''`);
    expect(refused.map((r) => line(r.filters, r.request_path, r.response_code, r.api_credits_consumed))).toEqual([line('responseCode=400', BLOCKS_PATH.replace('mainnet', 'moon'), 400, 20)]);
    const [k] = await rows(lake, `SELECT count(*) n, count(DISTINCT (filters, log_id)) d, count(DISTINCT log_id) ids FROM api_logs`);
    expect(k!.n).toBe(k!.d);
    expect(Number(k!.ids)).toBe(upTo);
  });

  it('its requests and compute units are those the pipeline run made, and no one else\'s', async () => {
    const blocks = data.streams.find((s) => s.table === 'platform_blocks')!;
    const chains = data.streams.find((s) => s.table === 'chains')!;
    const byPath = await rows(lake, `SELECT request_path, response_code, count(*) n, sum(api_credits_consumed) cu FROM api_logs WHERE filters = '' GROUP BY ALL`);
    expect(sorted(byPath.map((r) => line(r.request_path, r.response_code, r.n, r.cu)))).toEqual(sorted([
      line('/v1/chains', 200, chains.requests, chains.requests * WEIGHTS.chains),
      line(BLOCKS_PATH, 200, blocks.requests, blocks.requests * WEIGHTS.primaryBlocks),
      line(BLOCKS_PATH.replace('mainnet', 'moon'), 400, 1, WEIGHTS.primaryBlocks),
    ]));
    // Each path is charged its route's weight, as the limiter charges it.
    for (const r of byPath) {
      const route = matchRoute(String(r.request_path).split('/').slice(1))!.route;
      expect(Number(r.cu), r.request_path).toBe(Number(r.n) * route.weight);
    }
    const [ids] = await rows(lake, `SELECT count(DISTINCT api_key_id) k, count(DISTINCT org_id) o, min(api_key_id) id FROM api_logs`);
    expect(line(ids!.k, ids!.o, ids!.id)).toBe(line(1, 1, caller.apiKeyId));
    expect(caller.apiKeyId).not.toBe(sim.usage.caller(OTHER).apiKeyId);
  });

  it('api_usage_metrics lands the series as served, and it adds up to the key\'s requests', async () => {
    expect(sorted((await rows(lake, USAGE_SQL)).map(usageRow))).toEqual(sorted(servedUsage(answers)));
    // By path, a day: every request of the key before the usage run (each usage request sees those
    // before it only; the usage run's own logs request may come before or after it).
    const requests = sim.usage.requestsOf(caller).filter((s) => s.n < usageFrom);
    const day = intervalStart(T0 / 1000, 'daily');
    const paths = new Map<string, ServedRequest[]>();
    for (const s of requests) paths.set(s.path, [...(paths.get(s.path) ?? []), s]);
    const want = [...paths].map(([path, rs]) => line(path, rs.length, rs.filter((s) => isInvalid(s.status)).length, rs.reduce((n, s) => n + s.cu, 0)));
    const got = await rows(lake, `SELECT group_value, total_requests, invalid_requests, api_credits_used FROM api_usage_metrics
      WHERE time_interval = 'daily' AND grouped_by = 'requestPath' AND group_value NOT IN ('/v1/apiUsageMetrics', '/v1/apiLogs') AND epoch(timestamp) = ${day}`);
    const logsPages = paths.get('/v1/apiLogs')!;
    paths.delete('/v1/apiLogs');
    expect(sorted(got.map((r) => line(r.group_value, r.total_requests, r.invalid_requests, r.api_credits_used)))).toEqual(sorted(want.filter((w) => !w.startsWith('/v1/apiLogs|'))));
    const [pages] = await rows(lake, `SELECT total_requests n FROM api_usage_metrics WHERE time_interval = 'daily' AND group_value = '/v1/apiLogs'`);
    expect([logsPages.length, logsPages.length + 1]).toContain(Number(pages!.n));
    expect(logsPages.length).toBe(logs.streams[0]!.requests);
    const [moon] = await rows(lake, `SELECT success_rate_percent s, api_credits_wasted w FROM api_usage_metrics WHERE group_value LIKE '%/moon/%'`);
    expect(line(moon!.s, moon!.w)).toBe(line(0, WEIGHTS.primaryBlocks));
    // By status, an hour at a time: the same requests and CU in total, the refused one under 400.
    const [codes] = await rows(lake, `SELECT sum(total_requests) n, sum(api_credits_used) FILTER (WHERE group_value = '200') ok, sum(total_requests) FILTER (WHERE group_value = '400') bad
      FROM api_usage_metrics WHERE time_interval = 'hourly'`);
    expect(Number(codes!.bad)).toBe(1);
    expect(Number(codes!.n)).toBeGreaterThanOrEqual(requests.length);
    // The spend next to the data: the CU of the platform_blocks pages, from the usage table.
    const [spend] = await rows(lake, `SELECT sum(api_credits_used) cu FROM api_usage_metrics WHERE grouped_by = 'requestPath' AND group_value = '${BLOCKS_PATH}'`);
    expect(Number(spend!.cu)).toBe(data.streams.find((s) => s.table === 'platform_blocks')!.requests * WEIGHTS.primaryBlocks);
  });

  it('every usage and log page served passes the official client\'s schemas', () => {
    const mine = answers.filter((a) => ['apiUsageMetrics', 'apiLogs'].includes(a.route) && a.status === 200);
    expect(new Set(mine.map((a) => a.route))).toEqual(new Set(['apiUsageMetrics', 'apiLogs']));
    expect(mine.map((a) => officialProblems(a.route, a.body)).filter(Boolean)).toEqual([]);
    // Pages of 5 with a token: the logs were paged.
    expect(mine.some((a) => typeof (a.body as any).nextPageToken === 'string')).toBe(true);
  });

  it('a rerun resumes at the newest log, merges by key, and replaces the running day\'s points', async () => {
    const store = new StateStore(lake);
    const newest = store.load('api_logs', 'logs').cursor.newest!;
    const [top] = await rows(lake, `SELECT epoch(max(event_timestamp))::BIGINT t FROM api_logs WHERE filters = ''`);
    expect(newest).toBe(Number(top!.t));
    const before = (await rows(lake, `${LOG_SQL} WHERE filters = ''`)).map(logRow);
    const proxy = await recordingProxy(sim.url);
    try {
      const from = sim.usage.countOf(caller);
      const again = await runPipeline(pipeline(proxy.url, [{ table: 'api_logs', pageSize: 5 }, { table: 'api_usage_metrics', groupBy: 'requestPath' }]), { lake, logger: quiet });
      expectCleanRun(again, { drift: false });
      const sent = proxy.requests.filter((r) => r.url.startsWith('/v1/apiLogs') && !r.url.includes('pageToken'));
      expect(sent.map((r) => new URL(r.url, 'http://x').searchParams.get('startTimestamp'))).toEqual([String(newest)]);
      const upTo = firstAt(sim.usage.requestsOf(caller), '/v1/apiLogs', from);
      const all = sim.usage.logs(caller, {}, upTo);
      const after = (await rows(lake, `${LOG_SQL} WHERE filters = ''`)).map(logRow);
      expect(sorted(after)).toEqual(sorted(Array.from({ length: all.length }, (_, k) => logLine(all.at(k)))));
      expect(after.filter((r) => !before.includes(r)).length).toBe(upTo - before.length);
      const [k] = await rows(lake, `SELECT count(*) n, count(DISTINCT (filters, log_id)) d FROM api_logs`);
      expect(k!.n).toBe(k!.d);
      // One point per interval and group: the day's points replaced, now counting the logs run's pages.
      const [u] = await rows(lake, `SELECT count(*) n, count(DISTINCT (timestamp, group_value)) d, max(total_requests) FILTER (WHERE group_value = '/v1/apiLogs') logs
        FROM api_usage_metrics WHERE time_interval = 'daily'`);
      expect(u!.n).toBe(u!.d);
      expect(Number(u!.logs)).toBe(sim.usage.requestsOf(caller).filter((s) => s.path === '/v1/apiLogs' && s.n < firstAt(sim.usage.requestsOf(caller), '/v1/apiUsageMetrics', from)).length);
    } finally {
      await proxy.close();
    }
  });

  it('no form of a key lands in the lake, the outputs or the service\'s answers (the CLI at trace level)', async () => {
    const out = tmp();
    const file = join(out, 'usage.yaml');
    writeFileSync(file, [
      'name: usage_cli',
      'sources:',
      '  data: { url: "http://127.0.0.1:1", apiKey: "${CHAINLAKE_API_KEY}" }',
      'streams:',
      '  - { table: api_logs }',
      '  - { table: api_usage_metrics, timeInterval: minute, groupBy: apiKeyId }',
      '',
    ].join('\n'));
    const cliLake = join(out, 'lake');
    const r = await runCli(['run', file, '--lake', cliLake, '--data-url', sim.url, '--log-level', 'trace', '--log-format', 'json'], { CHAINLAKE_API_KEY: KEY });
    expect(r.code, r.stderr).toBe(0);
    const q = await runCli(['query', '--lake', cliLake, '--format', 'json', 'SELECT * FROM api_logs UNION ALL BY NAME SELECT * FROM api_usage_metrics']);
    expect(q.code, q.stderr).toBe(0);
    expect(JSON.parse(q.stdout).length).toBeGreaterThan(10);
    const found = [
      ...leaks('run stdout', Buffer.from(r.stdout)), ...leaks('run stderr', Buffer.from(r.stderr)), ...leaks('query stdout', Buffer.from(q.stdout)),
      ...[...filesUnder(out), ...filesUnder(root)].flatMap(([f, bytes]) => leaks(f, bytes)),
      ...answers.flatMap((a, i) => leaks(`answer ${i} (${a.route})`, Buffer.from(JSON.stringify(a.body)))),
    ];
    expect(found).toEqual([]);
    expect(r.stderr).toContain('"partition":"usage/timeInterval=minute/groupBy=apiKeyId"');
  });
});

describe('the usage endpoints of the simulator', () => {
  let sim: Simulator;
  const get = async (path: string, key: string | undefined = KEY) => {
    const res = await fetch(sim.url + path, { headers: key ? { [HEADER]: key } : {} });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    sim = await startSimulator({ seed: 2, apiKeys: [KEY, OTHER], now: clock, rateLimit: { data: { cuPerMinute: 100_000 } } });
  });
  afterAll(async () => {
    await sim?.close();
  });

  it('answers 400 naming the parameter, 401 without a key and 403 for another organization', async () => {
    const cases: Array<[string, RegExp]> = [
      ['/v1/apiUsageMetrics?timeInterval=yearly', /^timeInterval must be one of: minute, hourly, daily, weekly, monthly/],
      ['/v1/apiUsageMetrics?groupBy=host', /^groupBy must be one of: requestPath, responseCode/],
      ['/v1/apiUsageMetrics?startTimestamp=-1', /^startTimestamp must not be less than 0/],
      ['/v1/apiUsageMetrics?startTimestamp=1700100000&endTimestamp=1700000000', /^startTimestamp must not be after endTimestamp/],
      ['/v1/apiUsageMetrics?responseCode=ok', /^responseCode must be an HTTP status code/],
      ['/v1/apiLogs?requestType=ws', /^requestType must be one of: data, rpc/],
      ['/v1/apiLogs?pageSize=101', /^pageSize must not be greater than 100/],
      ['/v1/apiLogs?pageToken=nope', /^pageToken is invalid/],
    ];
    for (const [path, message] of cases) {
      const r = await get(path);
      expect(r.status, path).toBe(400);
      expect(r.body.message, path).toMatch(message);
    }
    for (const path of ['/v1/apiUsageMetrics', '/v1/apiLogs']) {
      const r = await get(path, '');
      expect(r.status, path).toBe(401);
      expect(r.body).toEqual({ message: expect.stringMatching(/API key is required/), error: 'Unauthorized', statusCode: 401 });
    }
    const other = sim.usage.caller(OTHER);
    expect((await get(`/v1/apiLogs?orgId=${other.orgId}`)).status).toBe(403);
    expect((await get(`/v1/apiLogs?orgId=${sim.usage.caller(KEY).orgId}`)).status).toBe(200);
    // A page token is the key's own.
    for (let i = 0; i < 3; i++) await get('/v1/chains');
    const first = await get('/v1/apiLogs?pageSize=1');
    expect(first.body.nextPageToken).toBeTypeOf('string');
    const stolen = await get(`/v1/apiLogs?pageSize=1&pageToken=${first.body.nextPageToken}`, OTHER);
    expect(stolen.status).toBe(400);
    expect(stolen.body.message).toMatch(/pageToken does not match/);
  });

  it('charges 200 CU a request ("xxl"), and serves each key only its own requests', async () => {
    const a = await get('/v1/apiUsageMetrics');
    const b = await get('/v1/apiUsageMetrics');
    expect(Number(a.headers.get('ratelimit-remaining')) - Number(b.headers.get('ratelimit-remaining'))).toBe(200);
    expect(WEIGHTS.apiUsageMetrics).toBe(200);
    expect(WEIGHTS.apiLogs).toBe(200);
    const mine = await get('/v1/apiLogs?pageSize=100');
    const theirs = await get('/v1/apiLogs?pageSize=100', OTHER);
    expect(new Set(mine.body.logs.map((l: LogEntry) => l.apiKeyId))).toEqual(new Set([sim.usage.caller(KEY).apiKeyId]));
    expect(theirs.body.logs.every((l: LogEntry) => l.apiKeyId === sim.usage.caller(OTHER).apiKeyId)).toBe(true);
    expect(theirs.body.orgId).not.toBe(mine.body.orgId);
    // Newest first, and a usage request is logged after its own answer.
    const times = mine.body.logs.map((l: LogEntry) => l.eventTimestamp);
    expect(times).toEqual([...times].sort((x: number, y: number) => y - x));
    expect(mine.body.logs[0].requestPath).toBe('/v1/apiUsageMetrics');
    expect(officialProblems('apiLogs', mine.body)).toBe('');
    expect(officialProblems('apiUsageMetrics', b.body)).toBe('');
  });

  it('filters by time (days), path, status and type, and groups by each field', async () => {
    const now = T0 / 1000;
    const tomorrow = now + 86_400;
    expect((await get(`/v1/apiUsageMetrics?startTimestamp=${tomorrow}`)).body.metrics).toEqual([]);
    expect((await get(`/v1/apiLogs?endTimestamp=${now - 86_400}`)).body.logs).toEqual([]);
    // The start is rounded down to the day: an hour from now still lists today's requests.
    expect((await get(`/v1/apiLogs?startTimestamp=${now + 3600}`)).body.logs.length).toBeGreaterThan(0);
    const chains = await get('/v1/apiLogs?requestPath=/v1/chains&pageSize=100');
    expect(chains.body.logs.length).toBe(3);
    expect((await get('/v1/apiLogs?requestType=rpc')).body.logs).toEqual([]);
    expect((await get('/v1/apiLogs?responseCode=401')).body.logs).toEqual([]);
    const byPath = await get('/v1/apiUsageMetrics?groupBy=requestPath&requestPath=/v1/chains');
    expect(byPath.body.metrics.flatMap((m: any) => m.values)).toEqual([expect.objectContaining({ groupedBy: 'requestPath', groupValue: '/v1/chains', totalRequests: 3, apiCreditsUsed: 3 })]);
    const byCode = await get('/v1/apiUsageMetrics?groupBy=responseCode&timeInterval=monthly');
    expect(new Set(byCode.body.metrics.flatMap((m: any) => m.values.map((v: any) => v.groupValue)))).toEqual(new Set([200, 400, 403]));
    const none = await get('/v1/apiUsageMetrics?timeInterval=weekly');
    expect(none.body.metrics.every((m: any) => m.values.length === 1 && m.values[0].groupedBy === 'None' && !('groupValue' in m.values[0]))).toBe(true);
    expect(none.body.aggregateDuration).toBe('1w');
  });

  it('starts weeks on Monday and months on the 1st (UTC)', () => {
    const t = Date.UTC(2026, 10, 27, 15, 4, 5) / 1000; // a Friday
    expect(new Date(intervalStart(t, 'weekly') * 1000).toISOString()).toBe('2026-11-23T00:00:00.000Z');
    expect(new Date(intervalStart(t, 'monthly') * 1000).toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(new Date(intervalStart(t, 'hourly') * 1000).toISOString()).toBe('2026-11-27T15:00:00.000Z');
    expect(new Date(intervalStart(t, 'minute') * 1000).toISOString()).toBe('2026-11-27T15:04:00.000Z');
    const monday = Date.UTC(2026, 10, 23) / 1000;
    expect(intervalStart(monday, 'weekly')).toBe(monday);
  });
});

describe('a usage pipeline', () => {
  it('refused by the service fails its partition with the service\'s message, and no key in it', async () => {
    const sim = await startSimulator({ apiKeys: [KEY], now: clock });
    const proxy = await recordingProxy(sim.url, { refuse: (r) => r.url.startsWith('/v1/apiUsageMetrics') });
    try {
      const report = await runPipeline(pipeline(proxy.url, [{ table: 'api_usage_metrics' }, { table: 'api_logs' }]), { lake: tmp(), logger: quiet });
      expect(report.status).toBe('failed');
      const failed = report.streams.find((s) => s.table === 'api_usage_metrics')!;
      expect(failed.errors.join('\n')).toMatch(/\/v1\/apiUsageMetrics.*refused by the test proxy/s);
      expect(report.streams.find((s) => s.table === 'api_logs')!.errors).toEqual([]);
      expect(leaks('report', Buffer.from(JSON.stringify(report)))).toEqual([]);
    } finally {
      await proxy.close();
      await sim.close();
    }
  });

  it('needs the data source\'s key, and names every mistake of its entries', async () => {
    const check = (streams: unknown[], apiKey?: string) => () => checkPipeline({ name: 'u', sources: { data: { url: 'http://127.0.0.1:1', ...(apiKey ? { apiKey } : {}) } }, streams }, 'u.yaml');
    expect(check([{ table: 'api_logs' }])).toThrow(/u\.yaml: streams\[0\]\.table: api_logs reports on the data service's API key: set sources\.data\.apiKey/);
    expect(check([{ table: 'chains' }, { table: 'api_usage_metrics' }], '${CHAINLAKE_UNSET_KEY_FOR_TEST}')).toThrow(/streams\[1\]\.table: api_usage_metrics reports on the data service's API key/);
    expect(check([{ table: 'api_usage_metrics', timeInterval: 'yearly' }], KEY)).toThrow(/streams\[0\]\.timeInterval: "yearly" is not one of minute, hourly, daily, weekly, monthly/);
    expect(check([{ table: 'api_usage_metrics', groupBy: 'host' }], KEY)).toThrow(/streams\[0\]\.groupBy: "host" is not one of requestPath/);
    expect(check([{ table: 'api_usage_metrics', pageSize: 10 }], KEY)).toThrow(/streams\[0\]\.pageSize: api_usage_metrics takes no page size/);
    expect(check([{ table: 'api_logs', responseCode: 600 }], KEY)).toThrow(/streams\[0\]\.responseCode: 600 is not an HTTP status/);
    expect(check([{ table: 'api_logs', startTimestamp: 1_700_000_010, endTimestamp: 1_700_000_005 }], KEY)).toThrow(/streams\[0\]\.endTimestamp: startTimestamp 2023-11-14T22:13:30Z must be before endTimestamp 2023-11-14T22:13:25Z \(the end is excluded\)/);
    expect(check([{ table: 'api_logs', pageSize: 101 }], KEY)).toThrow(/\(1 to 100\)/);
    expect(check([{ table: 'api_logs', requestType: 'ws' }], KEY)).toThrow(/streams\[0\]\.requestType: "ws" is not one of data, rpc/);
    // The CLI: exit 2, the place named, nothing of the key shown.
    const dir = tmp();
    const file = join(dir, 'nokey.yaml');
    writeFileSync(file, 'name: nokey\nsources:\n  data: { apiKey: "${CHAINLAKE_API_KEY}" }\nstreams:\n  - { table: api_logs }\n');
    const r = await runCli(['run', file, '--lake', join(dir, 'lake')], { CHAINLAKE_API_KEY: '' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('streams[0].table: api_logs reports on the data service\'s API key');
  });
});
