// What a run shows while it works. On a terminal: a block of lines, one per stream, redrawn in
// place (partitions done, pages, rows, request rate, 429s, ETA) with the compute units spent per
// minute on each service; log lines print above the block. Off a terminal (cron, files): pino JSON
// lines, plus a `progress` line now and then. `--quiet`: neither.
import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import type { RunReport } from '../pipeline/report.js';
import { textTable } from '../text.js';
import { STREAM_BY_TABLE } from '../streams/index.js';
import { makeLogger } from './log.js';
import { inert } from '../text.js';

export interface ProgressOut {
  write(s: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** Counters at one moment, to turn totals into rates. */
interface Sample {
  t: number;
  requests: Record<string, number>;
  cu: Record<string, number>;
}

/** Rates are averaged over this much recent time: steadier than per-redraw deltas. */
const RATE_WINDOW_MS = 5000;

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * Time left from the share of partitions done, assuming the rest take as long on average: the
 * only measure of the whole there is (a listing's length is unknown until its last page).
 */
export function eta(done: number, total: number, elapsedSeconds: number): number | undefined {
  if (total === 0 || done === 0 || done >= total) return undefined;
  return (elapsedSeconds * (total - done)) / done;
}

function sample(report: RunReport, t: number): Sample {
  const requests: Record<string, number> = {};
  const cu: Record<string, number> = {};
  for (const s of report.streams) {
    requests[s.table] = s.requests;
    const decl = STREAM_BY_TABLE.get(s.table);
    if (decl) cu[decl.service] = (cu[decl.service] ?? 0) + s.requests * decl.weight;
  }
  return { t, requests, cu };
}

/** Per second, between the oldest sample in the window and now. */
function rate(samples: Sample[], pick: (s: Sample) => number): number {
  if (samples.length < 2) return 0;
  const a = samples[0]!;
  const b = samples[samples.length - 1]!;
  const dt = (b.t - a.t) / 1000;
  return dt > 0 ? (pick(b) - pick(a)) / dt : 0;
}

/**
 * The display's lines for a report at `now`, given recent samples. `budgets`: CU per minute of the
 * services that have one (pipeline `tier` or `cuPerMinute`), to show the share in use.
 */
export function renderProgress(report: RunReport, samples: Sample[], startedAt: number, now: number, budgets: Record<string, number | undefined> = {}): string[] {
  const elapsed = (now - startedAt) / 1000;
  const last = samples[samples.length - 1];
  const services = Object.keys(last?.cu ?? {}).sort();
  const budget = services
    .map((svc) => {
      const perMinute = rate(samples, (s) => s.cu[svc] ?? 0) * 60;
      const cap = budgets[svc];
      const share = cap ? ` of ${fmt(cap)} (${Math.round((100 * perMinute) / cap)}%)` : '';
      return `${svc} ${fmt(perMinute)}${share} CU/min (${fmt(last!.cu[svc] ?? 0)} CU)`;
    })
    .join(', ');
  const done = report.streams.reduce((n, s) => n + s.partitionsDone, 0);
  const total = report.streams.reduce((n, s) => n + s.partitions, 0);
  const left = eta(done, total, elapsed);
  const head = `run ${report.runId} of ${report.pipeline}: ${done}/${total} partitions, ${formatDuration(elapsed)}${left !== undefined ? `, about ${formatDuration(left)} left` : ''}${budget ? ` | ${budget}` : ''}`;
  const rows = report.streams.map((s) => {
    const failed = s.errors.length > 0;
    const streamLeft = eta(s.partitionsDone, s.partitions, elapsed);
    const state = failed ? `${s.errors.length} failed` : s.partitionsDone >= s.partitions ? 'done' : streamLeft !== undefined ? `~${formatDuration(streamLeft)}` : '-';
    return [s.table, `${s.partitionsDone}/${s.partitions}`, s.pages, s.rows, Number(rate(samples, (x) => x.requests[s.table] ?? 0).toFixed(1)), s.status429, s.retries, state];
  });
  return [head, ...textTable(['table', 'partitions', 'pages', 'rows', 'req/s', '429s', 'retries', 'ETA'], rows).split('\n')];
}

export interface ProgressOptions {
  out: ProgressOut;
  /** Draw the live block (a terminal); otherwise log `progress` lines through the logger. */
  live: boolean;
  /** Redraw period on a terminal. */
  redrawMs?: number;
  /** Period of `progress` log lines off a terminal. */
  logEveryMs?: number;
  now?: () => number;
}

export class Progress {
  private report?: RunReport;
  private logger?: Logger;
  private samples: Sample[] = [];
  private drawn = 0;
  private timer?: NodeJS.Timeout;
  private startedAt = 0;
  private budgets: Record<string, number | undefined> = {};
  private readonly now: () => number;

  constructor(private readonly o: ProgressOptions) {
    this.now = o.now ?? (() => performance.now());
  }

  get live(): boolean {
    return this.o.live;
  }

  start(report: RunReport, logger?: Logger, budgets: Record<string, number | undefined> = {}): void {
    this.report = report;
    this.logger = logger;
    this.budgets = budgets;
    this.startedAt = this.now();
    this.tick();
    const every = this.o.live ? (this.o.redrawMs ?? 200) : (this.o.logEveryMs ?? 30_000);
    // unref: the display never keeps a finished process alive.
    this.timer = setInterval(() => this.tick(), every);
    this.timer.unref();
  }

  /** Takes a sample and redraws (terminal) or logs a progress line (off a terminal). */
  tick(): void {
    if (!this.report) return;
    const t = this.now();
    this.samples.push(sample(this.report, t));
    while (this.samples.length > 2 && this.samples[1]!.t <= t - RATE_WINDOW_MS) this.samples.shift();
    if (this.o.live) this.draw();
    else if (this.samples.length > 1)
      this.logger?.info(
        {
          streams: this.report.streams.map((s) => ({ table: s.table, partitions: s.partitions, partitionsDone: s.partitionsDone, pages: s.pages, rows: s.rows, requests: s.requests, status429: s.status429 })),
        },
        'progress',
      );
  }

  lines(): string[] {
    return this.report ? renderProgress(this.report, this.samples, this.startedAt, this.now(), this.budgets) : [];
  }

  private clear(): void {
    // Up to the block's first line, then clear to the end of the screen.
    if (this.drawn > 0) this.o.out.write(`\x1b[${this.drawn}A\r\x1b[J`);
    this.drawn = 0;
  }

  private draw(): void {
    const width = Math.max(20, (this.o.out.columns ?? 120) - 1);
    // Lines cut to the terminal's width: a wrapped line, or a newline or cursor move in a name,
    // would break counting lines to redraw.
    const lines = this.lines().map((l) => inert(l)).map((l) => (l.length > width ? l.slice(0, width - 1) + '…' : l));
    this.clear();
    this.o.out.write(lines.join('\n') + '\n');
    this.drawn = lines.length;
  }

  /** Prints text (log lines) above the live block. */
  write(text: string): void {
    if (!this.o.live) {
      this.o.out.write(text);
      return;
    }
    this.clear();
    this.o.out.write(text.endsWith('\n') ? text : text + '\n');
    if (this.report) this.draw();
  }

  /** A stream for a logger to write through (log lines land above the block). */
  stream(): Writable {
    return new Writable({
      write: (chunk: Buffer | string, _enc, cb) => {
        this.write(chunk.toString());
        cb();
      },
    });
  }

  /** Stops redrawing and removes the block (the run report follows). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.o.live) this.clear();
    this.report = undefined;
  }
}

export interface OutputFlags {
  quiet?: boolean;
  logLevel?: string;
  logFormat?: 'json' | 'pretty';
}

/**
 * The logger and the progress display of a run, from its flags and where stderr goes. On a
 * terminal the display stands in for routine info lines, so the default level there is `warn`.
 */
export function runOutput(flags: OutputFlags, out: ProgressOut = process.stderr, env: NodeJS.ProcessEnv = process.env): { logger: Logger; progress?: Progress } {
  if (flags.quiet) return { logger: makeLogger({ level: 'silent' }) };
  const live = out.isTTY === true && flags.logFormat !== 'json' && env.TERM !== 'dumb';
  const progress = new Progress({ out, live });
  if (!live) return { logger: makeLogger({ level: flags.logLevel, format: flags.logFormat }), progress };
  const logger = makeLogger({ level: flags.logLevel ?? env.CHAINLAKE_LOG_LEVEL ?? 'warn', format: 'pretty', destination: progress.stream() });
  return { logger, progress };
}
