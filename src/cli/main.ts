// The command line (README "CLI"). Exit codes: 0 done, 1 run failed (rerun resumes), 2 bad usage.
import { readFileSync } from 'node:fs';
import yargs from 'yargs';
import { loadPipeline, readPipeline, writtenKeys, type Pipeline } from '../config/pipeline.js';
import { RunError, UsageError } from '../errors.js';
import { VERSION } from '../version.js';
import { inert, inertAll, inertJson } from '../text.js';
import { runPipeline } from '../pipeline/run.js';
import { formatReport, type RunReport } from '../pipeline/report.js';
import { StateStore } from '../state/store.js';
import { readableLake } from '../state/cache.js';
import { isObjectUrl } from '../state/s3.js';
import { redactUrl } from '../cluster/url.js';
import { existingFolder, openWarehouse } from '../warehouse/views.js';
import { writeWarehouse } from '../warehouse/file.js';
import { format, query, type Format } from '../warehouse/query.js';
import type { Logger } from 'pino';
import { makeLogger } from './log.js';
import { runOutput } from './progress.js';
import { checkLake, checkPostgresUrl, checkUrl, wholeNumber } from './args.js';
import { aggregateSignaturesCommand, exportOpCommand } from './operations.js';
import { statusJson, statusTable } from './status.js';
import { checkWarehouse, refreshWarehouse, warehouseOption, wroteWarehouse, type WarehouseFlag } from './warehouse.js';

const DEFAULT_LAKE = 'data/lake';

/**
 * `--format` of status and check (and of run --dry-run): text for people, JSON for scripts. Both
 * may quote services' text: the text inert, the JSON with inertJson's escapes (the same value).
 */
type OutputFormat = 'table' | 'json';
const FORMAT_OPTION = { type: 'string', choices: ['table', 'json'], default: 'table', describe: 'a text table, or one JSON document (every field whole) for scripts' } as const;

interface RunArgs {
  pipeline?: string;
  lake?: string;
  dataUrl?: string;
  metricsUrl?: string;
  nodeUrl?: string;
  simulator?: boolean;
  seed?: number;
  logLevel?: string;
  quiet?: boolean;
  logFormat?: 'json' | 'pretty';
  flushRows?: string;
  fullRefresh?: string[];
  strict?: boolean;
  wait?: boolean;
  raw?: boolean;
  dryRun?: boolean;
  format?: OutputFormat;
  warehouse?: WarehouseFlag;
  budgetDb?: string;
  queue?: string;
}

/** `--full-refresh` alone means every table; with names, those tables (checked against the pipeline). */
function fullRefreshTables(p: Pipeline, v: string[] | undefined): Set<string> | undefined {
  if (v === undefined) return undefined;
  const inPipeline = new Set(p.streams.map((s) => s.table));
  const names = v.flatMap((x) => String(x).split(',')).filter((x) => x !== '' && x !== 'true');
  if (names.length === 0) return inPipeline;
  for (const n of names) if (!inPipeline.has(n)) throw new UsageError(`--full-refresh ${n}: not a table of ${p.file} (${[...inPipeline].join(', ')})`);
  return new Set(names);
}

async function cmdRun(a: RunArgs): Promise<number> {
  if (!a.pipeline) throw new UsageError('run: missing the pipeline file (chainlake run pipelines/demo.yaml)');
  const p: Pipeline = loadPipeline(a.pipeline);
  const lake = checkLake(a.lake ?? p.lake ?? DEFAULT_LAKE);
  const fullRefresh = fullRefreshTables(p, a.fullRefresh);
  const flushRows = wholeNumber('flush-rows', a.flushRows, 1);
  const dataUrl = checkUrl('data-url', a.dataUrl);
  const metricsUrl = checkUrl('metrics-url', a.metricsUrl);
  const nodeUrl = checkUrl('node-url', a.nodeUrl);
  const budgetDb = checkPostgresUrl('budget-db', a.budgetDb);
  const queue = checkPostgresUrl('queue', a.queue);
  if (queue && budgetDb) throw new UsageError('--budget-db: not with --queue (a queued run shares its budgets in the queue\'s database)');
  // The pipeline's text travels to the workers through the queue: a key written in it would too.
  const pipelineText = queue ? readPipeline(a.pipeline) : '';
  const written = queue ? writtenKeys(pipelineText, a.pipeline) : [];
  if (written.length)
    throw new UsageError(`${a.pipeline}: ${written.join(', ')}: with --queue an API key is read on each worker from the environment (apiKey: \${CHAINLAKE_API_KEY}), not written in the pipeline, which travels through the queue`);
  if (a.format !== undefined && !a.dryRun) throw new UsageError('--format: only with --dry-run (the run report is a table)');
  if (a.dryRun) {
    const { formatPlan, planRun } = await import('../pipeline/plan.js');
    // The simulator is not started: nothing would answer, as nothing is sent.
    const urls = { data: dataUrl, metrics: metricsUrl, node: nodeUrl };
    for (const [name, src] of Object.entries(p.sources)) src.url = a.simulator ? 'the embedded simulator' : (urls[name as keyof typeof urls] ?? src.url);
    // An s3:// lake's plan reads the copies of its states.
    const plan = { ...planRun(p, { lake: await readableLake(lake, { data: false }), fullRefresh }), ...(isObjectUrl(lake) ? { lake } : {}) };
    // A plan quotes the lake's states (page tokens the service sent).
    process.stdout.write((a.format === 'json' ? inertJson(JSON.stringify(plan, null, 1)) : inert(formatPlan(plan), { lines: true })) + '\n');
    return 0;
  }
  await checkWarehouse(lake, a.warehouse);
  let sim: { url: string; close(): Promise<void> } | undefined;
  if (a.simulator) {
    const { startSimulator } = await import('../simulator/server.js');
    sim = await startSimulator({ port: 0, seed: a.seed ?? 1 });
    p.sources.data.url = sim.url;
    p.sources.metrics.url = sim.url;
    p.sources.node.url = sim.url;
  }
  if (dataUrl) p.sources.data.url = dataUrl;
  if (metricsUrl) p.sources.metrics.url = metricsUrl;
  if (nodeUrl) p.sources.node.url = nodeUrl;
  const { logger, progress } = runOutput(a);
  if (sim) logger.info({ url: sim.url }, 'embedded simulator started');
  const shared = budgetDb ? (await import('../cluster/port.js')).sharedBudgets(budgetDb) : undefined;
  if (budgetDb) logger.info({ db: redactUrl(budgetDb) }, 'budgets shared with every process on the same key');
  if (queue) logger.info({ queue: redactUrl(queue) }, "the run's partitions go to the workers of the queue");
  // Signals are handled until the embedded simulator has closed too.
  return stoppable(logger, 'committed work stays, a rerun resumes', async (signal) => {
    try {
      const o = { lake, logger, signal, flushRows, fullRefresh, strict: a.strict, wait: a.wait, keepRaw: a.raw, sharedBudget: shared?.factory, onStart: (r: RunReport) => progress?.start(r, logger, Object.fromEntries(Object.entries(p.sources).map(([name, src]) => [name, src.cuPerMinute]))) };
      const urls = { data: sim?.url ?? dataUrl, metrics: sim?.url ?? metricsUrl, node: sim?.url ?? nodeUrl };
      const report = await (queue ? (await import('../pipeline/queued.js')).runQueued(p, { ...o, queue, pipelineText, urls }) : runPipeline(p, o)).finally(() => progress?.stop());
      // Its errors quote the services' answers: each stays on its line, inert.
      process.stdout.write(formatReport(inertAll(report)) + '\n');
      await refreshWarehouse('run', lake, a.warehouse);
      if (report.status !== 'ok') process.stderr.write('chainlake: the run failed; committed work is kept and rerunning the same command resumes\n');
      return report.status === 'ok' ? 0 : 1;
    } finally {
      // Unspent slices go back to their windows for the other processes.
      await shared?.close().catch((e: unknown) => logger.warn({ err: e instanceof Error ? e.message : String(e) }, 'the shared budgets did not close'));
      await sim?.close();
    }
  });
}

async function cmdWorker(a: { queue: string; lake: string; concurrency?: string; logLevel?: string; logFormat?: 'json' | 'pretty' }): Promise<number> {
  const queue = checkPostgresUrl('queue', a.queue)!;
  const concurrency = wholeNumber('concurrency', a.concurrency, 1);
  const lake = checkLake(a.lake);
  const logger = makeLogger({ level: a.logLevel, format: a.logFormat });
  const { runWorker } = await import('../pipeline/worker.js');
  await stoppable(logger, 'the jobs under way keep their commits and go back to the queue', (signal) => runWorker({ queue, lake, concurrency, logger, signal }));
  return 0;
}

/**
 * Runs `work` with a signal that SIGINT and SIGTERM abort: the command stops at its next safe
 * point, keeps what it committed (`kept` says what that is), releases the lake's lock and exits 1
 * with `stopped by SIGTERM`.
 */
async function stoppable<T>(logger: Logger, kept: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  const on = (sig: string) => {
    logger.warn({ signal: sig }, `stopping: ${kept}`);
    ac.abort(new RunError(`stopped by ${sig}`));
  };
  process.once('SIGINT', on);
  process.once('SIGTERM', on);
  try {
    return await work(ac.signal);
  } finally {
    process.off('SIGINT', on);
    process.off('SIGTERM', on);
  }
}

async function cmdQuery(a: { sql?: string; file?: string; lake: string; format: Format | 'arrow' }): Promise<number> {
  if (!a.sql && !a.file) throw new UsageError('query: give SQL or --file FILE');
  if (a.sql && a.file) throw new UsageError('query: give SQL or --file FILE, not both');
  let sql = a.sql ?? '';
  if (a.file) {
    try {
      sql = readFileSync(a.file, 'utf8');
    } catch (err) {
      throw new UsageError(`--file ${a.file}: cannot read (${(err as NodeJS.ErrnoException).code})`);
    }
  }
  const arrow = a.format === 'arrow' ? await import('../warehouse/arrow.js') : undefined;
  arrow?.refuseTerminal(process.stdout.isTTY);
  const conn = await openWarehouse(await readableLake(checkLake(a.lake)));
  let result;
  try {
    if (arrow) {
      // Batch by batch as DuckDB produces them: a result of any size goes out in bounded memory.
      await arrow.writeArrow(await arrow.arrowResult(conn, sql), 'stream', arrow.toStream(process.stdout));
      return 0;
    }
    result = await query(conn, sql);
  } catch (err) {
    throw new UsageError(`query${a.file ? ` ${a.file}` : ''}: ${(err as Error).message}`);
  }
  process.stdout.write(format(result, a.format as Format) + '\n');
  return 0;
}

async function cmdRebuild(a: { table: string; lake: string; warehouse?: WarehouseFlag }): Promise<number> {
  const { rebuildTable } = await import('../pipeline/rebuild.js');
  const logger = makeLogger({});
  const lake = checkLake(a.lake);
  await checkWarehouse(lake, a.warehouse);
  const r = await stoppable(logger, 'the table is as it was, a rerun rebuilds it', (signal) => rebuildTable(lake, a.table, { logger, signal }));
  process.stdout.write(
    `rebuilt ${r.table} from ${r.rawFiles} raw files (${r.pages} pages) of ${r.partitions} partitions: ${r.rows} rows (${r.replayed} replayed, ${r.skipped} skipped as refetched), ${r.rejects} rejects, in ${r.seconds.toFixed(1)} s (${Math.round(r.replayed / r.seconds)} rows/s)\n`,
  );
  await refreshWarehouse('rebuild', lake, a.warehouse);
  return 0;
}

async function cmdCompact(a: { tables?: string[]; lake: string; 'target-rows'?: string; wait?: boolean; warehouse?: WarehouseFlag }): Promise<number> {
  const { compactLake } = await import('../pipeline/compact.js');
  const targetRows = wholeNumber('target-rows', a['target-rows'], 2);
  await checkWarehouse(checkLake(a.lake), a.warehouse);
  const logger = makeLogger({});
  const reports = await stoppable(logger, 'the groups merged so far stay, a rerun merges the rest', (signal) =>
    compactLake(isObjectUrl(a.lake) ? checkLake(a.lake) : existingLake(a.lake), a.tables ?? [], { logger, targetRows, wait: a.wait, signal }),
  );
  const done = reports.filter((r) => r.rowsRewritten > 0);
  for (const r of done)
    process.stdout.write(`compacted ${r.table}: ${r.filesBefore} data files -> ${r.filesAfter} (${r.rowsRewritten} rows rewritten in ${r.partitions} partitions), in ${r.seconds.toFixed(1)} s\n`);
  const rest = reports.length - done.length;
  if (rest) process.stdout.write(`${done.length ? 'the other ' : ''}${rest} table${rest === 1 ? '' : 's'}: no small files to merge\n`);
  await refreshWarehouse('compact', a.lake, a.warehouse);
  return 0;
}

/** check, report and export read a lake: a missing one is a typo, not an empty lake. */
function existingLake(lake: string): string {
  return existingFolder(checkLake(lake), '--lake');
}

/** The local folder to read a lake from (an s3:// lake's read copy, brought up to date), which must exist. */
async function readLake(lake: string): Promise<string> {
  return isObjectUrl(lake) ? readableLake(checkLake(lake), { mustExist: true }) : existingLake(lake);
}

async function cmdCheck(a: { lake: string; format: OutputFormat }): Promise<number> {
  const { checksJson, formatChecks, runChecks } = await import('../warehouse/check.js');
  const lake = await readLake(a.lake);
  const results = await runChecks(await openWarehouse(lake), lake);
  process.stdout.write((a.format === 'json' ? inertJson(JSON.stringify(checksJson(isObjectUrl(a.lake) ? checkLake(a.lake) : lake, results), null, 1)) : formatChecks(results)) + '\n');
  return results.some((r) => r.status === 'fail') ? 1 : 0;
}

async function cmdReport(a: { lake: string; out?: string }): Promise<number> {
  const { writeReport } = await import('../warehouse/report.js');
  // An s3:// lake has no folder to write next to: its report goes to the current folder.
  const r = await writeReport(await readLake(a.lake), a.out ?? (isObjectUrl(a.lake) ? 'report.html' : undefined));
  process.stdout.write(`wrote ${r.file} (${r.charts} charts, ${r.tables} tables)\n`);
  return 0;
}

async function cmdWarehouse(a: { lake: string; out?: string }): Promise<number> {
  process.stdout.write(wroteWarehouse(await writeWarehouse(await readLake(a.lake), { out: a.out, flag: '--out' })) + '\n');
  return 0;
}

async function cmdExport(a: { lake: string; table: string; to: string; format?: 'parquet' | 'csv' | 'ndjson' | 'arrow'; where?: string; columns?: string; force?: boolean; csvFormulas?: boolean }): Promise<number> {
  const { exportTable, parseColumns } = await import('../warehouse/export.js');
  const r = await exportTable({ lake: await readLake(a.lake), table: a.table, to: a.to, format: a.format, where: a.where, columns: parseColumns(a.columns), force: a.force, csvFormulas: a.csvFormulas });
  process.stdout.write(`exported ${r.rows} rows (${r.columns.length} columns) of ${a.table} to ${r.file} as ${r.format}\n`);
  return 0;
}

async function cmdStatus(a: { lake: string; format: OutputFormat }): Promise<number> {
  const given = checkLake(a.lake);
  const store = new StateStore(await readableLake(given, { data: false }));
  const states = store.all();
  const where = isObjectUrl(given) ? given : store.lake;
  if (a.format === 'json') {
    process.stdout.write(inertJson(JSON.stringify(statusJson(where, states), null, 1)) + '\n');
    return 0;
  }
  if (!states.length) {
    process.stdout.write(`no partitions in ${where} yet\n`);
    return 0;
  }
  // Off a terminal (a pipe, a log file) the table is made for 100 columns.
  const width = process.stdout.isTTY && process.stdout.columns ? process.stdout.columns : 100;
  process.stdout.write(statusTable(states, width) + '\n');
  return 0;
}

interface SimArgs {
  port: number;
  seed: number;
  scale?: number;
  faults?: number;
  faultKinds?: string;
  faultSeed?: number;
  slowMs?: number;
  dataCuPerMinute?: number;
  dataCuPerDay?: number;
  metricsCuPerMinute?: number;
  metricsCuPerDay?: number;
  blockSeconds?: number;
  rateWindowSeconds?: number;
  apiKeys?: string;
  keyHeader?: string;
  avgTpsNextKey?: 'nextPageToken' | 'nextPageStartKey';
  nodeShape?: 'avalanchego' | 'reference';
  nodeAdmin?: boolean;
}

async function cmdSim(a: SimArgs): Promise<number> {
  const { startSimulator } = await import('../simulator/server.js');
  const { FAULT_KINDS } = await import('../simulator/faults.js');
  if (!Number.isInteger(a.port) || a.port < 0 || a.port > 65535) throw new UsageError(`--port ${a.port}: must be 0 to 65535`);
  if (a.faults !== undefined && !(a.faults >= 0 && a.faults <= 1)) throw new UsageError(`--faults ${a.faults}: a rate from 0 to 1`);
  const kinds = a.faultKinds?.split(',').filter(Boolean);
  for (const k of kinds ?? []) if (!(FAULT_KINDS as readonly string[]).includes(k)) throw new UsageError(`--fault-kinds: ${k} is not one of ${FAULT_KINDS.join(', ')}`);
  const w = a.rateWindowSeconds;
  if (w !== undefined && !(Number.isInteger(w) && w >= 1 && w < 86_400)) throw new UsageError(`--rate-window-seconds ${w}: a whole number of seconds from 1 to 86399`);
  const budget = (perMinute?: number, perDay?: number) => {
    if (!perMinute) return undefined;
    if (w && Math.floor((perMinute * w) / 60) < 1) throw new UsageError(`--rate-window-seconds ${w}: ${perMinute} CU a minute leaves no CU in a window`);
    return { cuPerMinute: perMinute, ...(perDay ? { cuPerDay: perDay } : {}), ...(w ? { windowSeconds: w } : {}) };
  };
  const data = budget(a.dataCuPerMinute, a.dataCuPerDay);
  const metrics = budget(a.metricsCuPerMinute, a.metricsCuPerDay);
  const sim = await startSimulator({
    port: a.port,
    seed: a.seed,
    scale: a.scale,
    ...(data || metrics ? { rateLimit: { data, metrics, ...(a.blockSeconds !== undefined ? { blockSeconds: a.blockSeconds } : {}) } } : {}),
    ...(a.faults ? { faults: { rate: a.faults, kinds: kinds as never, seed: a.faultSeed, slowMs: a.slowMs } } : {}),
    ...(a.apiKeys ? { apiKeys: a.apiKeys.split(',') } : {}),
    ...(a.keyHeader ? { keyHeader: a.keyHeader } : {}),
    ...(a.avgTpsNextKey ? { avgTpsNextKey: a.avgTpsNextKey } : {}),
    node: { shape: a.nodeShape ?? 'avalanchego', admin: a.nodeAdmin === true },
  });
  process.stdout.write(`chainlake simulator (seed ${a.seed}) serving the data, metrics and node services at ${sim.url}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await sim.close();
  return 0;
}

/** An error nobody expected, with its stack: the message on one line, the stack's frames below it. */
function unexpected(err: unknown): string {
  if (!(err instanceof Error)) return inert(String(err));
  const head = `${err.name}: ${err.message}`;
  const stack = err.stack ?? head;
  return stack.startsWith(head) ? inert(head) + inert(stack.slice(head.length), { lines: true }) : inert(stack, { lines: true });
}

export async function main(argv: string[]): Promise<void> {
  // `chainlake query ... | head` closes the pipe early: that is the reader's choice, not an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
  let code = 0;
  const exit = (c: number) => {
    code = c;
  };
  try {
    await yargs(argv)
      .scriptName('chainlake')
      .usage('$0 <command> [options]\n\nBatch ETL from the chain data service, the metrics service and a node (JSON-RPC) into a Parquet lake queried with DuckDB.')
      .option('lake', { type: 'string', describe: `lake folder, or s3://bucket/prefix (docs/object-storage.md); default ${DEFAULT_LAKE}, or for run the pipeline's \`lake\``, global: true, requiresArg: true })
      // A run's lake may come from its pipeline; every other command reads the default.
      .middleware((a) => {
        if (a._[0] !== 'run') a.lake ??= DEFAULT_LAKE;
      })
      .command(
        'run [pipeline]',
        'run a pipeline (YAML) into the lake; reruns resume',
        (y) =>
          y
            .positional('pipeline', { type: 'string', describe: 'pipeline file, e.g. pipelines/demo.yaml' })
            .option('data-url', { type: 'string', requiresArg: true, describe: 'data service URL (overrides the pipeline)' })
            .option('metrics-url', { type: 'string', requiresArg: true, describe: 'metrics service URL (overrides the pipeline)' })
            .option('node-url', { type: 'string', requiresArg: true, describe: 'node JSON-RPC URL (overrides the pipeline)' })
            .option('simulator', { type: 'boolean', describe: 'start the embedded simulator on a free loopback port and use it for every service' })
            .option('seed', { type: 'number', requiresArg: true, describe: 'simulator seed (with --simulator)' })
            .option('log-level', { type: 'string', choices: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], describe: 'log level' })
            .option('log-format', { type: 'string', choices: ['json', 'pretty'] as const, describe: 'log lines as JSON (default off a TTY) or pretty' })
            .option('flush-rows', { type: 'string', requiresArg: true, describe: 'rows a partition buffers before it commits (default 10000)' })
            .option('full-refresh', { type: 'string', array: true, describe: 'rebuild these tables (all when no name is given) from scratch; old files are replaced atomically' })
            .option('strict', { type: 'boolean', describe: 'a row sent to _rejects fails the run (exit 1)' })
            .option('wait', { type: 'boolean', describe: 'wait for another run on the same lake to finish instead of refusing' })
            .option('quiet', { type: 'boolean', describe: 'no progress display and no log lines (the run report still prints)' })
            .conflicts('quiet', 'log-level')
            .option('raw', { type: 'boolean', default: true, describe: 'keep raw pages under _raw/ for `rebuild` (--no-raw: keep none)' })
            .option('dry-run', { type: 'boolean', describe: 'check the pipeline and print what a run would fetch (partitions, where each starts, CU at the least); sends nothing, writes nothing' })
            .option('format', { type: 'string', choices: ['table', 'json'] as const, describe: 'with --dry-run: the plan as text (default) or one JSON document' })
            .option('budget-db', { type: 'string', requiresArg: true, describe: 'postgres://user:password@host:port/db: share each API key\'s rate budget with every process using this database (docs/cluster.md)' })
            .option('queue', { type: 'string', requiresArg: true, describe: 'postgres://user:password@host:port/db: hand the partitions to `chainlake worker`s on this queue, and wait for them (docs/workers.md)' })
            .option('warehouse', warehouseOption),
        async (a) => exit(await cmdRun(a as never)),
      )
      .command(
        'worker',
        'take the partitions of queued runs (run --queue) of a lake and work them, until stopped (SIGTERM, SIGINT)',
        (y) =>
          y
            .option('queue', { type: 'string', requiresArg: true, demandOption: true, describe: 'postgres://user:password@host:port/db: the queue (docs/workers.md)' })
            .option('concurrency', { type: 'string', requiresArg: true, describe: 'jobs worked at once (default 1)' })
            .option('log-level', { type: 'string', choices: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], describe: 'log level' })
            .option('log-format', { type: 'string', choices: ['json', 'pretty'] as const, describe: 'log lines as JSON (default off a TTY) or pretty' }),
        async (a) => exit(await cmdWorker(a as never)),
      )
      .command(
        'query [sql]',
        'run SQL over the lake (every table is a view of its name)',
        (y) =>
          y
            .positional('sql', { type: 'string', describe: 'SQL to run' })
            .option('file', { type: 'string', requiresArg: true, describe: 'read the SQL from a file (e.g. sql/top_senders.sql)' })
            .option('format', { type: 'string', choices: ['table', 'csv', 'json', 'arrow'] as const, default: 'table', describe: 'output format (arrow: Arrow IPC stream, binary, for a file or a program)' }),
        async (a) => exit(await cmdQuery(a as never)),
      )
      .command(
        'rebuild <table>',
        're-derive a table from its raw pages (kept under _raw/) without refetching',
        (y) => y.positional('table', { type: 'string', demandOption: true, describe: 'table to rebuild' }).option('warehouse', warehouseOption),
        async (a) => exit(await cmdRebuild(a as never)),
      )
      .command(
        'compact [tables..]',
        "merge each partition's small data files (a file per commit) into files of up to --target-rows rows; the rows do not change",
        (y) =>
          y
            .positional('tables', { type: 'string', array: true, describe: 'tables to compact (all when none is given)' })
            .option('target-rows', { type: 'string', requiresArg: true, describe: 'rows per file to aim for (default 1000000); files of half as many or more are left alone' })
            .option('wait', { type: 'boolean', describe: 'wait for a run holding the lake instead of exiting 1' })
            .option('warehouse', warehouseOption),
        async (a) => exit(await cmdCompact(a as never)),
      )
      .command('status', 'per stream partition: cursor / high-water mark, rows, last run', (y) => y.option('format', FORMAT_OPTION), async (a) => exit(await cmdStatus(a as never)))
      .command('tables [name]', "the tables, or one table's reference (columns, key, refresh) from its declaration", (y) => y.positional('name', { type: 'string', describe: 'a table, e.g. erc_transfers' }), async (a) => exit((await import('./tables.js')).printTables(a)))
      .command(
        'check',
        'data checks over the lake (keys, amounts, block cursors, metric series); exit 1 when one fails',
        (y) => y.option('format', FORMAT_OPTION),
        async (a) => exit(await cmdCheck(a as never)),
      )
      .command(
        'report',
        'write one self-contained HTML report with charts of the lake',
        (y) => y.option('out', { type: 'string', requiresArg: true, describe: 'HTML file to write (default: report.html next to the lake)' }),
        async (a) => exit(await cmdReport(a as never)),
      )
      .command(
        'warehouse',
        'write a DuckDB database file of views over the lake (tables, _runs, _rejects, the bundled queries) for other tools to open',
        (y) => y.option('out', { type: 'string', requiresArg: true, describe: 'DuckDB file to write (default: warehouse.duckdb next to the lake)' }),
        async (a) => exit(await cmdWarehouse(a as never)),
      )
      .command(
        'export <table>',
        'write a table (or part of it) to one Parquet, CSV, NDJSON or Arrow IPC file',
        (y) =>
          y
            .positional('table', { type: 'string', describe: 'table to export, e.g. erc_transfers' })
            .option('to', { type: 'string', demandOption: true, requiresArg: true, describe: 'file to write (outside the lake)' })
            .option('format', { type: 'string', choices: ['parquet', 'csv', 'ndjson', 'arrow'], describe: 'file format (default: from the file name)' })
            .option('where', { type: 'string', requiresArg: true, describe: 'SQL filter on the table\'s columns, e.g. "block_number >= 1000"' })
            .option('columns', { type: 'string', requiresArg: true, describe: 'comma list of columns (default: all)' })
            .option('force', { type: 'boolean', describe: 'replace the file if it exists' })
            .option('csv-formulas', {
              type: 'boolean',
              describe: "CSV: write text cells that begin with =, +, -, @, tab or CR as they are; by default they get a leading ' so that a spreadsheet shows them as text instead of running them (OWASP CSV injection)",
            }),
        async (a) => exit(await cmdExport(a as never)),
      )
      .command(
        'sim',
        'serve the simulated data service, metrics service and node (JSON-RPC) on one loopback port until stopped',
        (y) =>
          y
            .option('port', { type: 'number', default: 8080, requiresArg: true, describe: 'port (0: any free port)' })
            .option('seed', { type: 'number', default: 1, requiresArg: true, describe: 'seed of the simulated world' })
            .option('scale', { type: 'number', requiresArg: true, describe: 'multiply transfers and internal transactions per listing' })
            .option('faults', { type: 'number', requiresArg: true, describe: 'share of requests (0 to 1) answered with an injected fault' })
            .option('fault-kinds', { type: 'string', requiresArg: true, describe: 'comma list: 429, 429-no-retry-after, 500, 502, 503, reset, slow, truncated, malformed' })
            .option('fault-seed', { type: 'number', requiresArg: true, describe: 'seed of the fault schedule' })
            .option('slow-ms', { type: 'number', requiresArg: true, describe: 'delay of a slow answer' })
            .option('data-cu-per-minute', { type: 'number', requiresArg: true, describe: 'data service budget (turns rate limiting on)' })
            .option('data-cu-per-day', { type: 'number', requiresArg: true, describe: 'data service daily budget' })
            .option('metrics-cu-per-minute', { type: 'number', requiresArg: true, describe: 'metrics service budget (turns rate limiting on)' })
            .option('metrics-cu-per-day', { type: 'number', requiresArg: true, describe: 'metrics service daily budget' })
            .option('block-seconds', { type: 'number', requiresArg: true, describe: 'how long a client that keeps sending while limited is blocked' })
            .option('rate-window-seconds', { type: 'number', requiresArg: true, describe: 'length of the rate-limit windows, announced in ratelimit-policy (default 60; the budgets stay per minute)' })
            .option('api-keys', { type: 'string', requiresArg: true, describe: 'comma list of valid keys (others get 401)' })
            .option('key-header', { type: 'string', requiresArg: true, describe: 'read the key from this header only, as production does (default: x-glacier-api-key and x-data-api-key)' })
            .option('avg-tps-next-key', { type: 'string', choices: ['nextPageToken', 'nextPageStartKey'], describe: 'how avg_tps names its next page (default nextPageToken; nextPageStartKey is the legacy schema)' })
            .option('node-shape', { type: 'string', choices: ['avalanchego', 'reference'], default: 'avalanchego', describe: "how the node answers: as AvalancheGo (namespace avm, uint64 as JSON numbers, -32000 errors) or as the reference documents it (namespace xvm, uint64 as strings)" })
            .option('node-admin', { type: 'boolean', describe: "serve the node's admin API reads at /ext/admin (a node has it off unless --api-admin-enabled=true)" }),
        async (a) => exit(await cmdSim(a as never)),
      )
      .command(exportOpCommand(exit))
      .command(aggregateSignaturesCommand(exit))
      .demandCommand(1, 'give a command: run, query, status, tables, check, report, warehouse, export, rebuild, compact, sim, export-op or aggregate-signatures')
      .strict()
      .help()
      .version(VERSION)
      .exitProcess(false)
      .fail((msg, err) => {
        // yargs reports its own validation failures as YError: those are usage errors too.
        if (err && err.name !== 'YError') throw err;
        throw new UsageError(msg ?? err?.message ?? 'bad usage');
      })
      .parseAsync();
  } catch (err) {
    // A usage error may list several problems, a line each; a run error is one line, and may
    // quote a service's answer.
    if (err instanceof UsageError) {
      process.stderr.write(`chainlake: ${inert(err.message, { lines: true })}\n`);
      code = 2;
    } else if (err instanceof RunError) {
      process.stderr.write(`chainlake: ${inert(err.message)}\n`);
      code = 1;
    } else {
      process.stderr.write(`chainlake: ${unexpected(err)}\n`);
      code = 1;
    }
  }
  process.exitCode = code;
}
