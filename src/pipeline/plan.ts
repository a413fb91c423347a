// `chainlake run --dry-run`: what a run of a pipeline would fetch, worked out without sending
// anything. It checks the pipeline as a run does, lists every stream's partitions and where each
// would start from (read from the lake's state files, when there is a lake: no lock is taken and
// nothing is written), and reckons per service the fewest requests and compute units the run
// needs and how long they take within the service's budget. Only the fewest can be known: how
// many pages a listing has is learnt by paging it.
import { existsSync } from 'node:fs';
import type { Pipeline, SourceName } from '../config/pipeline.js';
import { METRICS_BUDGET, TIERS, type Tier } from '../sources/budget.js';
import { StateStore, type PartitionState } from '../state/store.js';
import type { Partition, Refresh, StreamConfig } from '../decl/stream.js';
import { BLOCK_CU } from '../streams/chain_reads.js';
import { STREAM_BY_TABLE } from '../streams/index.js';
import { UsageError } from '../errors.js';
import type { Job } from './partition.js';
import { rememberedBlock, type BlockCursor } from './block_times.js';
import { maxProbes } from './block_search.js';
import { newStreamReport, type StreamReport } from './report.js';
import { textTable } from '../text.js';
import { strategyOf, type PartitionPlan, type PlanBlocks } from './strategies.js';

export type { PartitionPlan, Start } from './strategies.js';

/**
 * All jobs of a pipeline; two entries that name the same partition of a table are a config error.
 * Here rather than in run.ts, so that a dry run plans without loading the runtime (DuckDB).
 */
export function planJobs(p: Pipeline, reports: Map<string, StreamReport>, fullRefresh: string[] = []): Job[] {
  const jobs: Job[] = [];
  const seen = new Map<string, number>();
  p.streams.forEach((cfg, i) => {
    const decl = STREAM_BY_TABLE.get(cfg.table)!;
    if (!reports.has(decl.table)) reports.set(decl.table, newStreamReport(decl.table));
    const report = reports.get(decl.table)!;
    for (const partition of decl.partitions(cfg)) {
      const key = `${decl.table}\0${partition.id}`;
      if (seen.has(key)) throw new UsageError(`${p.file}: streams[${i}]: partition ${partition.id} of ${decl.table} is also in streams[${seen.get(key)}]`);
      seen.set(key, i);
      report.partitions++;
      jobs.push({ decl, cfg, partition, report, fullRefresh: fullRefresh.includes(decl.table) });
    }
  });
  return jobs;
}

export interface StreamPlan {
  /** The entry's place in the pipeline (`streams[2]`). */
  entry: number;
  table: string;
  service: SourceName;
  endpoint: string;
  refresh: Refresh;
  /** Compute units of one request: of the first and of every further page. */
  cuPerRequest: number;
  /** Items a page asks for; null where the endpoint takes no page size. */
  pageSize: number | null;
  /** A block-range stream fetched a block a request (a request for each block of its window). */
  perBlock: boolean;
  partitions: PartitionPlan[];
  requests: number;
  cu: number;
}

export interface Budget {
  cuPerMinute: number;
  cuPerDay: number | null;
  /** The pipeline's (`tier` or numbers), or the service's published figures when it sets none. */
  from: 'pipeline' | 'published';
  /** With `published` on the data service: the tier assumed (the lowest one the key allows). */
  tier?: Tier;
}

export interface ServicePlan {
  service: SourceName;
  url: string;
  partitions: number;
  requests: number;
  cu: number;
  /** Null for the node, which has no compute-unit budget. */
  budget: Budget | null;
  /** How long the fewest requests take within the budget, at the least (null without a budget). */
  seconds: number | null;
}

export interface RunPlan {
  pipeline: string;
  file: string;
  lake: string;
  /** A missing lake is no error: every partition starts from its configured start. */
  lakeExists: boolean;
  streams: StreamPlan[];
  services: ServicePlan[];
}

function planBlocks(bc: BlockCursor, cfg: StreamConfig, partition: Partition, store: StateStore | undefined, head: number | undefined, counted: Set<string>): PlanBlocks {
  const out: PlanBlocks = { startBlock: cfg[bc.startOption] as number | undefined, endBlock: cfg[bc.endOption] as number | undefined, unknown: [], most: 0, searches: 0 };
  const times = bc.times;
  if (!times) return out;
  const chain = times.chain(partition);
  for (const [key, side] of [
    [times.startOption, 'startBlock'],
    [times.endOption, 'endBlock'],
  ] as const) {
    const t = cfg[key] as number | undefined;
    if (t === undefined) continue;
    const block = store ? rememberedBlock(store, chain, t) : undefined;
    if (block !== undefined) {
      out[side] = block;
      continue;
    }
    if (side === 'startBlock') out.startAt = t;
    else out.endAt = t;
    // The chain's length bounds the search: the head a run saw, or that of a long chain.
    out.most = maxProbes(head === undefined ? LONG_CHAIN : head + 1);
    out.unknown.push(key);
    const id = `${chain}\0${t}`;
    if (!counted.has(id)) out.searches++;
    counted.add(id);
  }
  return out;
}

/** Blocks of a long chain (the C-Chain has tens of millions): what bounds a search before the head is known. */
const LONG_CHAIN = 2 ** 27;

/** The budget a service's requests are reckoned against. */
function budgetOf(p: Pipeline, service: SourceName): Budget | null {
  const src = p.sources[service];
  if (src.cuPerMinute !== undefined) return { cuPerMinute: src.cuPerMinute, cuPerDay: src.cuPerDay ?? null, from: 'pipeline' };
  if (service === 'metrics') return { cuPerMinute: METRICS_BUDGET.cuPerMinute, cuPerDay: src.cuPerDay ?? METRICS_BUDGET.cuPerDay, from: 'published' };
  if (service === 'data') {
    // Without a key the service grants the unauthenticated tier; with one, at least the free tier.
    const tier: Tier = src.apiKey ? 'free' : 'unauthenticated';
    return { cuPerMinute: TIERS[tier].cuPerMinute, cuPerDay: src.cuPerDay ?? TIERS[tier].cuPerDay, from: 'published', tier };
  }
  return null;
}

/**
 * Seconds `cu` compute units take at `perMinute`, each day's spending capped at `perDay`: the
 * days whose budget runs out, then the rest at the minute rate.
 */
export function budgetSeconds(cu: number, perMinute: number, perDay: number | null): number {
  const fullDays = perDay === null || cu <= perDay ? 0 : Math.ceil(cu / perDay) - 1;
  return fullDays * 86_400 + ((cu - fullDays * (perDay ?? 0)) / perMinute) * 60;
}

/**
 * The plan of a run of `p` into `lake`: the pipeline's partitions as the run makes them (two
 * entries naming one partition are the same usage error), each with where it would start.
 */
export function planRun(p: Pipeline, o: { lake: string; fullRefresh?: string[] }): RunPlan {
  const jobs = planJobs(p, new Map(), o.fullRefresh);
  const lakeExists = existsSync(o.lake);
  const store = new StateStore(o.lake);
  const empty = (table: string, partition: string): PartitionState => ({ table, partition, files: [], rows: 0, rejects: 0, cursor: {} });
  const searched = new Set<string>();
  const streams: StreamPlan[] = p.streams.map((cfg, entry) => {
    const own = jobs.filter((j) => j.cfg === cfg);
    const decl = own[0]!.decl;
    const partitions = own.map((job) => {
      const { partition } = job;
      const state = lakeExists ? store.load(decl.table, partition.id) : empty(decl.table, partition.id);
      const blocks = decl.blockCursor && planBlocks(decl.blockCursor, cfg, partition, lakeExists ? store : undefined, state.head?.block, searched);
      return { id: partition.id, ...strategyOf(decl).start(job, state, blocks) };
    });
    const searches = partitions.reduce((n, x) => n + (x.searches ?? 0), 0);
    const listed = partitions.reduce((n, x) => n + x.requests, 0);
    const requests = listed + searches;
    return {
      entry,
      table: decl.table,
      service: decl.service,
      endpoint: decl.endpoint,
      refresh: decl.refresh,
      cuPerRequest: decl.weight,
      pageSize: decl.pageSize.max === 0 ? null : (cfg.pageSize ?? decl.pageSize.default),
      perBlock: decl.blockCursor?.perBlock === true,
      partitions,
      requests,
      cu: listed * decl.weight + searches * BLOCK_CU,
    };
  });
  const services: ServicePlan[] = (['data', 'metrics', 'node'] as const)
    .filter((svc) => streams.some((s) => s.service === svc))
    .map((svc) => {
      const own = streams.filter((s) => s.service === svc);
      const cu = own.reduce((n, s) => n + s.cu, 0);
      const budget = budgetOf(p, svc);
      return {
        service: svc,
        url: p.sources[svc].url,
        partitions: own.reduce((n, s) => n + s.partitions.length, 0),
        requests: own.reduce((n, s) => n + s.requests, 0),
        cu,
        budget,
        seconds: budget ? budgetSeconds(cu, budget.cuPerMinute, budget.cuPerDay) : null,
      };
    });
  return { pipeline: p.name, file: p.file, lake: store.lake, lakeExists, streams, services };
}

const n = (x: number) => x.toLocaleString('en-US');

/** `under a second`, `40 s`, `12 min`, `3 h 20 min`, `2 days 5 h`. */
export function duration(seconds: number): string {
  if (seconds < 1) return 'under a second';
  if (seconds < 90) return `${Math.round(seconds)} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `${minutes} min`;
  if (minutes < 48 * 60) return `${Math.floor(minutes / 60)} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
  const hours = Math.round(minutes / 60);
  return `${Math.floor(hours / 24)} days${hours % 24 ? ` ${hours % 24} h` : ''}`;
}

function budgetText(b: Budget | null): string {
  if (!b) return 'none';
  return `${n(b.cuPerMinute)}/min${b.cuPerDay !== null ? ` ${n(b.cuPerDay)}/day` : ''}${b.from === 'published' ? ' *' : ''}`;
}

const REFRESH: Record<Refresh, string> = {
  append: 'append from the high-water block',
  merge: 'merge by key',
  replace: 'replaced by each complete fetch',
};

export function formatPlan(plan: RunPlan): string {
  const out = [
    `dry run of ${plan.pipeline} (${plan.file}) into ${plan.lake}: nothing is sent, nothing is written`,
    plan.lakeExists ? "where each partition starts is read from the lake's committed state" : 'no lake there yet: every partition starts from its configured start',
  ];
  for (const s of plan.streams) {
    const node = s.service === 'node';
    const cost = node ? 'JSON-RPC' : `${s.cuPerRequest} CU a request`;
    const pages = s.perBlock ? 'a request per block' : s.pageSize !== null ? `pages of ${s.pageSize}${node ? '' : `, each further page ${s.cuPerRequest} CU`}` : 'one page';
    out.push('', `streams[${s.entry}] ${s.table}: ${s.service} ${node ? '' : 'GET '}${s.endpoint}`, `  ${REFRESH[s.refresh]}; ${cost}, ${pages}`);
    out.push(`  ${s.partitions.length} partition${s.partitions.length === 1 ? '' : 's'}:`);
    for (const x of s.partitions) out.push(`    ${x.id}: ${[x.start === 'new' || x.start === 'done' || x.start === 'refused' ? x.start : '', x.from].filter(Boolean).join(', ')}`);
  }
  const rows = plan.services.map((s) => [
    s.service,
    s.partitions,
    `>= ${n(s.requests)}`,
    s.budget ? `>= ${n(s.cu)}` : '-',
    budgetText(s.budget),
    s.seconds === null ? '-' : `>= ${duration(s.seconds)}`,
  ]);
  out.push(
    '',
    'per service, at the least: a request per partition, or per block for block-by-block streams; a',
    'listing that pages further costs its CU per request again',
    textTable(['service', 'partitions', 'requests', 'CU', 'budget (CU)', 'takes'], rows),
  );
  if (plan.services.some((s) => s.budget?.from === 'published'))
    out.push(
      "* none in the pipeline: the service's published figures (data service: the unauthenticated tier, or",
      '  with an apiKey the free tier, the lowest a key has); a run learns the real budget from the answers',
    );
  out.push(`services: ${plan.services.map((s) => `${s.service} at ${s.url}`).join(', ')}`);
  return out.join('\n');
}
