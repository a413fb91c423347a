// `chainlake run` (a pipeline into the lake, in this process or through a queue) and `chainlake
// worker` (the partitions of queued runs). The handlers import what they run (yaml, DuckDB, pino,
// pg) when they run: start-up (main.ts).
import type { Argv } from 'yargs';
import type { Pipeline } from '../config/pipeline.js';
import { EXIT, RunError, UsageError } from '../errors.js';
import { didYouMean } from '../closest.js';
import { inert, inertAll, inertJson } from '../text.js';
import type { RunSpec, SpecOptions } from '../pipeline/spec.js';
import { formatReport, runOutcome, type RunReport } from '../pipeline/report.js';
import { readableLake } from '../state/cache.js';
import { isObjectUrl } from '../state/location.js';
import { redactUrl } from '../cluster/url.js';
import { commandOf, checkLake, checkPostgresUrl, checkUrl, DEFAULT_LAKE, givenLake, seedOf, wholeNumber, type ArgsOf, type Globals } from './args.js';
import { stoppable } from './stoppable.js';
import { AUTO_MIN_FILES } from '../pipeline/sizes.js';
import { checkWarehouse, refreshWarehouse, warehouseOption } from './warehouse.js';

const LOG_LEVEL_OPTION = { type: 'string', choices: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], describe: 'log level' } as const;
const LOG_FORMAT_OPTION = { type: 'string', choices: ['json', 'pretty'], describe: 'log lines as JSON (default off a TTY) or pretty' } as const;

const runFlags = (y: Argv<Globals>) =>
  y
    .positional('pipeline', { type: 'string', describe: 'pipeline file, e.g. pipelines/demo.yaml' })
    .option('data-url', { type: 'string', requiresArg: true, describe: 'data service URL (overrides the pipeline)' })
    .option('metrics-url', { type: 'string', requiresArg: true, describe: 'metrics service URL (overrides the pipeline)' })
    .option('node-url', { type: 'string', requiresArg: true, describe: 'node JSON-RPC URL (overrides the pipeline)' })
    .option('simulator', { type: 'boolean', describe: 'start the embedded simulator on a free loopback port and use it for every service' })
    .option('seed', { type: 'number', requiresArg: true, describe: 'simulator seed (with --simulator)' })
    .option('log-level', LOG_LEVEL_OPTION)
    .option('log-format', LOG_FORMAT_OPTION)
    .option('flush-rows', { type: 'string', requiresArg: true, describe: 'rows a partition buffers before it commits (default 10000)' })
    .option('full-refresh', { type: 'string', array: true, describe: 'rebuild these tables (all when no name is given) from scratch; old files are replaced atomically' })
    .option('strict', { type: 'boolean', describe: 'a row sent to _rejects fails the run (exit 1)' })
    .option('wait', { type: 'boolean', describe: 'wait for another run on the same lake to finish instead of refusing' })
    .option('quiet', { type: 'boolean', describe: 'no progress display and no log lines (the run report still prints)' })
    .conflicts('quiet', 'log-level')
    .option('compact', { type: 'boolean', default: true, describe: `at the end, merge the small files of partitions with ${AUTO_MIN_FILES} or more to merge, in block order (--no-compact: leave them to \`chainlake compact\`)` })
    .option('raw', { type: 'boolean', default: true, describe: 'keep raw pages under _raw/ for `rebuild` (--no-raw: keep none)' })
    .option('dry-run', { type: 'boolean', describe: 'check the pipeline and print what a run would fetch (partitions, where each starts, CU at the least); sends nothing, writes nothing' })
    .option('format', { type: 'string', choices: ['table', 'json'], describe: 'with --dry-run: the plan as text (default) or one JSON document' } as const)
    .option('budget-db', { type: 'string', requiresArg: true, describe: 'postgres://user:password@host:port/db: share each API key\'s rate budget with every process using this database (docs/cluster.md)' })
    .option('queue', { type: 'string', requiresArg: true, describe: 'postgres://user:password@host:port/db: hand the partitions to `chainlake worker`s on this queue, and wait for them (docs/workers.md)' })
    .option('warehouse', warehouseOption);

/** `--full-refresh` alone means every table; with names, those tables (checked against the pipeline). */
function fullRefreshTables(p: Pipeline, v: string[] | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  const inPipeline = new Set(p.streams.map((s) => s.table));
  const names = v.flatMap((x) => String(x).split(',')).filter((x) => x !== '' && x !== 'true');
  if (names.length === 0) return [...inPipeline];
  for (const n of names) if (!inPipeline.has(n)) throw new UsageError(`--full-refresh ${n}: not a table of ${p.file}${didYouMean(n, inPipeline)} (its tables: ${[...inPipeline].join(', ')})`);
  return [...new Set(names)];
}

async function cmdRun(a: ArgsOf<typeof runFlags>): Promise<number> {
  if (!a.pipeline) throw new UsageError('run: missing the pipeline file (chainlake run pipelines/demo.yaml)');
  // The flags that stand alone first: a typo in one is said before the pipeline is read.
  const given = { data: checkUrl('data-url', a.dataUrl), metrics: checkUrl('metrics-url', a.metricsUrl), node: checkUrl('node-url', a.nodeUrl) };
  const flushRows = wholeNumber('flush-rows', a.flushRows, 1);
  const budgetDb = checkPostgresUrl('budget-db', a.budgetDb);
  const queue = checkPostgresUrl('queue', a.queue);
  if (queue && budgetDb) throw new UsageError('--budget-db: not with --queue (a queued run shares its budgets in the queue\'s database)');
  if (a.format !== undefined && !a.dryRun) throw new UsageError('--format: only with --dry-run (the run report is a table)');
  const { parsePipeline, readPipeline, writtenKeys } = await import('../config/pipeline.js');
  const text = readPipeline(a.pipeline);
  // The pipeline's text travels to the workers through the queue: a key written in it would too.
  const written = queue ? writtenKeys(text, a.pipeline) : [];
  if (written.length)
    throw new UsageError(`${a.pipeline}: ${written.join(', ')}: with --queue an API key is read on each worker from the environment (apiKey: \${CHAINLAKE_API_KEY}), not written in the pipeline, which travels through the queue`);
  const p: Pipeline = parsePipeline(text, a.pipeline);
  // The run's options, in the one form every process working the run reads (the spec's).
  const options: SpecOptions = { flushRows, fullRefresh: fullRefreshTables(p, a.fullRefresh), strict: a.strict, keepRaw: a.raw };
  const lake = checkLake(a.lake ?? p.lake ?? DEFAULT_LAKE);
  if (a.dryRun) return dryRun(p, lake, options.fullRefresh, a.simulator ? undefined : given, a.format);
  // Loaded before the simulator and the shared budgets start, which a signal during the loading would not stop.
  const { runPipeline } = await import('../pipeline/run.js');
  const { overrideUrls } = await import('../pipeline/spec.js');
  const { runOutput } = await import('./progress.js');
  const { logger, progress } = runOutput({ quiet: a.quiet, logLevel: a.logLevel, logFormat: a.logFormat });
  await checkWarehouse(lake, a.warehouse);
  let sim: { url: string; close(): Promise<void> } | undefined;
  if (a.simulator) {
    const { startSimulator } = await import('../simulator/server.js');
    sim = await startSimulator({ port: 0, seed: seedOf(a.seed, 1) });
    logger.info({ url: sim.url }, 'embedded simulator started');
  }
  // A URL given for a service wins over the simulator's.
  const spec: RunSpec = { pipeline: { file: a.pipeline, text }, options, urls: { data: given.data ?? sim?.url, metrics: given.metrics ?? sim?.url, node: given.node ?? sim?.url } };
  // A key read from a variable that is not set: said, as a typo in its name would otherwise pass
  // for "no key" and the run would go on the unauthenticated budget (the simulator needs none).
  for (const [name, src] of Object.entries(p.sources) as Array<[keyof RunSpec['urls'], (typeof p.sources)[keyof typeof p.sources]]>)
    if (src.apiKeyUnset?.length && !(sim && spec.urls[name] === sim.url))
      logger.warn({ source: name, unset: src.apiKeyUnset }, `sources.${name}.apiKey: ${src.apiKeyUnset.map((v) => `\${${v}}`).join(', ')} is not set in the environment: this run sends no key (the unauthenticated budget)`);
  const shared = budgetDb ? (await import('../cluster/port.js')).sharedBudgets(budgetDb) : undefined;
  if (shared) {
    try {
      await shared.check();
    } catch (err) {
      await sim?.close();
      throw new RunError(`--budget-db: ${(err as Error).message}; nothing was fetched (the run would not share its budgets)`);
    }
  }
  if (budgetDb) logger.info({ db: redactUrl(budgetDb) }, 'budgets shared with every process on the same key');
  if (queue) logger.info({ queue: redactUrl(queue) }, "the run's partitions go to the workers of the queue");
  // Signals are handled until the embedded simulator has closed too.
  return stoppable(logger, 'committed work stays, a rerun resumes', async (signal) => {
    try {
      overrideUrls(p, spec.urls, (name) => (spec.urls[name] === sim?.url ? '--simulator' : `--${name}-url`));
      // What only this process has; the spec's options go with it, or, queued, in the spec to the workers.
      const here = { lake, logger, signal, wait: a.wait, compactAfter: a.compact ? AUTO_MIN_FILES : (false as const), sharedBudget: shared?.factory, onStart: (r: RunReport) => progress?.start(r, logger, Object.fromEntries(Object.entries(p.sources).map(([name, src]) => [name, src.cuPerMinute]))) };
      const report = await (queue ? (await import('../pipeline/queued.js')).runQueued(p, { ...here, queue, spec }) : runPipeline(p, { ...here, ...options })).finally(() => progress?.stop());
      // Its errors quote the services' answers: each stays on its line, inert.
      process.stdout.write(formatReport(inertAll(report)) + '\n');
      // A run that lost the lake leaves its warehouse file to the writer that has it now.
      if (!report.lockLost) await refreshWarehouse('run', lake, a.warehouse);
      // Stopped by a signal, the stop says so (stoppable): the partitions it cut short are no failure.
      if (signal.aborted) return EXIT.ok;
      const outcome = runOutcome(report);
      if (outcome.line) process.stderr.write(`chainlake: ${outcome.line}\n`);
      return outcome.code;
    } finally {
      // Unspent slices go back to their windows for the other processes.
      await shared?.close().catch((e: unknown) => logger.warn({ err: e instanceof Error ? e.message : String(e) }, 'the shared budgets did not close'));
      await sim?.close();
    }
  });
}

/**
 * `run --dry-run`: the plan of the run, printed. The simulator is not started (nothing would
 * answer, as nothing is sent): its sources show as `the embedded simulator` (no `urls`).
 */
async function dryRun(p: Pipeline, lake: string, fullRefresh: string[] | undefined, urls: RunSpec['urls'] | undefined, format: string | undefined): Promise<number> {
  const { formatPlan, planRun } = await import('../pipeline/plan.js');
  const { overrideUrls } = await import('../pipeline/spec.js');
  const shown = 'the embedded simulator';
  overrideUrls(p, urls ?? { data: shown, metrics: shown, node: shown });
  // An s3:// lake's plan reads the copies of its states.
  const plan = { ...planRun(p, { lake: await readableLake(lake, { data: false }), fullRefresh }), ...(isObjectUrl(lake) ? { lake } : {}) };
  // A plan quotes the lake's states (page tokens the service sent).
  process.stdout.write((format === 'json' ? inertJson(JSON.stringify(plan, null, 1)) : inert(formatPlan(plan), { lines: true })) + '\n');
  // As the run would fail those partitions, the plan does not end as one that would succeed.
  const refused = plan.streams.flatMap((s) => s.partitions.filter((x) => x.start === 'refused').map((x) => `${s.table} ${x.id}`));
  if (!refused.length) return 0;
  process.stderr.write(`chainlake: a run would refuse ${refused.length === 1 ? 'this partition' : `these ${refused.length} partitions`} (its start below what the lake fetched, above): ${inert(refused.join(', '))}\n`);
  return 1;
}

export const runCommand = commandOf('run [pipeline]', 'run a pipeline (YAML) into the lake; reruns resume', runFlags, cmdRun);

const workerFlags = (y: Argv<Globals>) =>
  y
    .option('queue', { type: 'string', requiresArg: true, demandOption: true, describe: 'postgres://user:password@host:port/db: the queue (docs/workers.md)' })
    .option('concurrency', { type: 'string', requiresArg: true, describe: 'jobs worked at once (default 1)' })
    .option('log-level', LOG_LEVEL_OPTION)
    .option('log-format', LOG_FORMAT_OPTION);

async function cmdWorker(a: ArgsOf<typeof workerFlags>): Promise<number> {
  const queue = checkPostgresUrl('queue', a.queue)!;
  const concurrency = wholeNumber('concurrency', a.concurrency, 1);
  const lake = checkLake(givenLake(a));
  const { makeLogger } = await import('./log.js');
  const logger = makeLogger({ level: a.logLevel, format: a.logFormat });
  const { runWorker } = await import('../pipeline/worker.js');
  await stoppable(logger, 'the jobs under way keep their commits and go back to the queue', (signal) => runWorker({ queue, lake, concurrency, logger, signal }), { stopIsDone: true });
  return 0;
}

export const workerCommand = commandOf('worker', 'take the partitions of queued runs (run --queue) of a lake and work them, until stopped (SIGTERM, SIGINT)', workerFlags, cmdWorker);
