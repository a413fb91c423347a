#!/usr/bin/env node
// @ts-check
// Crash-safety torture test: "kill -9 at any instant, rerun, tables equal an uninterrupted run".
//
//   node scripts/torture.mjs [--kills N] [--compact-kills M] [--seed S] [--pipeline FILE]
//                            [--flush-rows F] [--rounds] [--keep] [--attempt-timeout SEC] [--timeout SEC] [--quiet]
//                            [--unreaped]
//   node scripts/torture.mjs --compare LAKE_A LAKE_B     (only step 4, on two existing lakes)
//   node scripts/torture.mjs --s3 [--kills N] ...        (the tortured lake on object storage)
//
// 1. starts the simulator (`chainlake sim --port 0 --seed S`);
// 2. runs the pipeline once into <tmp>/clean (must exit 0), and once more into <tmp>/control: a
//    column that differs between these two uninterrupted runs is reported (a determinism failure)
//    and left out of the comparison with the tortured lake;
// 3. runs the same command into <tmp>/tortured again and again: each run gets a seeded random
//    delay (1 in 4 within the CLI's start, 3 in 4 from there to 1.1 x a run's length) and is
//    killed when it expires, 3 in 4 with SIGKILL and 1 in 4 with SIGTERM (the graceful stop path),
//    until N signals have landed on a live run; then it reruns until a run exits 0 (exit 1 is
//    rerun, exit 2 fails). Each run's output is in <tmp>/logs/attempt-NNNN.log;
// 4. after every attempt checks the lake's invariants on a copy rolled forward as the next run
//    would (the checks of `chainlake check`, run in this process, pass on it: every Parquet file in a table folder
//    readable and listed by one state, every file listed there present, keys unique, rows as the
//    states say...; and what check does not look at: the raw pages and rejects a state lists are
//    present, _rejects holds only Parquet files a state lists), and the clean lake passes them too;
//    at the end it compares every table of both lakes as multisets of rows (EXCEPT ALL both ways),
//    the partitions' state counters and cursors, and that no lock is held at the end; a rerun that
//    the lock refused (in use by another run, though every earlier run is dead) fails the torture;
// 5. before that comparison, compacts the tortured lake (`chainlake compact`) with kills the same
//    way, M of them (default: half of N, rounded up), with a delay up to 1.1 x the length of an
//    uninterrupted compaction of the control lake (which must still equal the clean lake), and
//    reruns it until one exits 0: the comparison then reads the compacted lake. Logs:
//    <tmp>/logs/compact-NNNN.log.
// --rounds: a run that exits 0 before the N kills have landed ends a round: its lake is compared
// with the clean one as in step 4 and emptied, so that the kills land on backfills (a window fetched
// in chunks, say) rather than on reruns that find nothing new. scripts/chunks.yaml is made for it.
// --unreaped starts every command under a parent that never reaps it (as in a container whose PID 1
// does not reap): a killed run stays a zombie while the next one starts, and its lock must not
// refuse that one. Linux only (the end of a run is read from /proc).
// With --s3 the tortured lake is s3://torture/tortured on an S3-compatible server (s3rver, a dev
// dependency) that the script starts on loopback in its own process; the clean and control lakes
// stay local folders. Kills then land during uploads to staging keys, state writes, server-side
// copies and deletes; after every attempt the store's objects are downloaded whole into
// <tmp>/tortured (the _lock object and the _staging keys included) and checked and compared there.
// Exit 0: PASS; 1: FAIL (mismatch, a broken invariant, a run that exited 2, a hang); 2: bad usage.
// Environment: TORTURE_KILLS, TORTURE_COMPACT_KILLS, TORTURE_SEED, TORTURE_PIPELINE, TORTURE_FLUSH_ROWS, TORTURE_KEEP=1.
import { spawn } from 'node:child_process';
/** @import { ChildProcess } from 'node:child_process' */
import { cpSync, existsSync, mkdtempSync, mkdirSync, openSync, closeSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants as osConstants, tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'bin', 'chainlake.js');

// ---------------------------------------------------------------------------------------- options
/**
 * @typedef {object} Options
 * @property {number} kills
 * @property {number} compactKills
 * @property {number} seed
 * @property {string} pipeline
 * @property {number} flushRows
 * @property {boolean} keep
 * @property {number} attemptTimeout
 * @property {number} timeout
 * @property {boolean} quiet
 * @property {boolean} rounds
 * @property {boolean} unreaped
 * @property {boolean} s3
 * @property {[string, string]} [compare]
 */

/**
 * @param {string} msg
 * @returns {never}
 */
function usage(msg) {
  if (msg === 'help') {
    process.stdout.write(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\nimport ')[0].replace(/^#!.*\n/, '').replace(/^\/\/ @ts-check\n/, '').replace(/^\/\/ ?/gm, '') + '\n');
    process.exit(0);
  }
  process.stderr.write(`torture: ${msg}\nusage: node scripts/torture.mjs [--s3] [--kills N] [--seed S] [--pipeline FILE] [--flush-rows F] [--rounds] [--keep] [--attempt-timeout SEC] [--timeout SEC] [--quiet] [--unreaped]\n`);
  process.exit(2);
}

/** The options that take a value, by flag. */
const VALUED = /** @type {const} */ ({ '--kills': 'kills', '--compact-kills': 'compactKills', '--seed': 'seed', '--pipeline': 'pipeline', '--flush-rows': 'flushRows', '--attempt-timeout': 'attemptTimeout', '--timeout': 'timeout' });
/** @typedef {(typeof VALUED)[keyof typeof VALUED]} Valued */

/**
 * @param {string[]} argv
 * @returns {Options}
 */
function parseArgs(argv) {
  const env = process.env;
  /** @type {Partial<Record<Valued, string>>} */
  const given = {
    kills: env.TORTURE_KILLS ?? '10',
    compactKills: env.TORTURE_COMPACT_KILLS,
    seed: env.TORTURE_SEED ?? '1',
    pipeline: env.TORTURE_PIPELINE ?? 'pipelines/demo.yaml',
    flushRows: env.TORTURE_FLUSH_ROWS ?? '200',
    attemptTimeout: '120',
  };
  const flags = { keep: env.TORTURE_KEEP === '1', quiet: false, rounds: false, unreaped: false, s3: false };
  /** @type {string[] | undefined} */
  let compare;
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    /** @type {string | undefined} */
    let v;
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq > 0) [a, v] = [a.slice(0, eq), a.slice(eq + 1)];
    if (a === '--compare') {
      compare = [argv[++i], argv[++i]];
      if (!compare[1]) usage('--compare needs two lake folders');
    } else if (a === '--keep') flags.keep = true;
    else if (a === '--unreaped') flags.unreaped = true;
    else if (a === '--s3') flags.s3 = true;
    else if (a === '--quiet') flags.quiet = true;
    else if (a === '--rounds') flags.rounds = true;
    else if (a === '--help' || a === '-h') usage('help');
    else if (a in VALUED) {
      v ??= argv[++i];
      if (v === undefined) usage(`${a} needs a value`);
      given[VALUED[/** @type {keyof typeof VALUED} */ (a)]] = v;
    } else usage(`unknown argument ${a}`);
  }
  /** @type {(name: string, v: string | undefined, min: number) => number} */
  const int = (name, v, min) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) usage(`--${name} ${v}: a whole number >= ${min}`);
    return n;
  };
  const kills = int('kills', given.kills, 0);
  const compactKills = given.compactKills === undefined ? Math.ceil(kills / 2) : int('compact-kills', given.compactKills, 0);
  /** @type {Options} */
  const o = {
    ...flags,
    kills,
    compactKills,
    seed: int('seed', given.seed, 0),
    flushRows: int('flush-rows', given.flushRows, 1),
    attemptTimeout: int('attempt-timeout', given.attemptTimeout, 1),
    timeout: given.timeout === undefined ? 300 + 20 * (kills + compactKills) : int('timeout', given.timeout, 1),
    pipeline: resolve(given.pipeline ?? ''),
  };
  if (o.rounds && o.s3) usage('--rounds empties the tortured lake after each round: a local lake only, not with --s3');
  if (!existsSync(o.pipeline)) usage(`--pipeline ${o.pipeline}: no such file`);
  if (compare) {
    const [a, b] = compare.map((l) => (existsSync(l) ? resolve(l) : usage(`--compare: no lake at ${l}`)));
    o.compare = [a, b];
  }
  if (o.unreaped && !existsSync('/proc/self/stat')) usage('--unreaped reads the end of a run from /proc: Linux only');
  if (!existsSync(join(ROOT, 'dist', 'bin', 'main.js'))) usage('dist/ is missing: run `npm run build` (or `make torture`)');
  return o;
}

const opts = parseArgs(process.argv.slice(2));
// The stream declarations (keys), the tables `chainlake check` looks at, its checks and the commit
// protocol's roll-forward, as the CLI has them (dist/, typed by src/).
/** @type {typeof import('../src/streams/index.js')} */
const { STREAMS, STREAM_BY_TABLE } = await import(join(ROOT, 'dist', 'streams', 'index.js'));
/** @type {typeof import('../src/decl/stream.js')} */
const { stampColumns } = await import(join(ROOT, 'dist', 'decl', 'stream.js'));
/** @type {typeof import('../src/warehouse/views.js')} */
const { LAKE_TABLES, lakeDatabase, connectWarehouse } = await import(join(ROOT, 'dist', 'warehouse', 'views.js'));
/** @type {typeof import('../src/warehouse/check.js')} */
const { runChecks } = await import(join(ROOT, 'dist', 'warehouse', 'check.js'));
/** @type {typeof import('../src/state/store.js')} */
const { StateStore } = await import(join(ROOT, 'dist', 'state', 'store.js'));
/** @type {typeof import('../src/state/location.js')} */
const { existingLake } = await import(join(ROOT, 'dist', 'state', 'location.js'));
/** @type {typeof import('../src/state/lock.js')} */
const { LakeLock } = await import(join(ROOT, 'dist', 'state', 'lock.js'));
/** @type {typeof import('../src/iceberg/table.js')} */
const { icebergPublisher } = await import(join(ROOT, 'dist', 'iceberg', 'table.js'));
const say = (s = '') => process.stdout.write(s + '\n');
const deadline = Date.now() + opts.timeout * 1000;

/**
 * mulberry32: a small seeded PRNG, so a seed replays the same kill schedule.
 * @param {number} seed
 */
function prng(seed) {
  let a = (seed ^ 0x9e3779b9) >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = prng(opts.seed);

// -------------------------------------------------------------------------------------- processes
/** @type {Set<ChildProcess>} */
const children = new Set();
/** Commands started with --unreaped: not children of this process. @type {Set<number>} */
const grandchildren = new Set();
function cleanupChildren() {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const pid of grandchildren) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}
process.on('exit', cleanupChildren);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    cleanupChildren();
    process.stderr.write(`torture: stopped by ${sig}\n`);
    process.exit(1);
  });
}

class Fail extends Error {}

/** @typedef {{ url: string, child: ChildProcess }} Simulator */

/** @returns {Promise<Simulator>} */
async function startSimulator() {
  const child = spawn(process.execPath, [CLI, 'sim', '--port', '0', '--seed', String(opts.seed)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let err = '';
  /** @type {string} */
  const url = await new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Fail(`the simulator printed no URL within 30 s: ${out}${err}`)), 30_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /serving the .* services at (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        res(m[1]);
      }
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code, sig) => {
      clearTimeout(timer);
      rej(new Fail(`the simulator exited (${code ?? sig}) before serving: ${out}${err}`));
    });
  });
  child.stdout.resume();
  return { url, child };
}

/** @param {Simulator | undefined} sim */
async function stopSimulator(sim) {
  if (!sim || sim.child.exitCode !== null || sim.child.signalCode !== null) return;
  const gone = new Promise((r) => sim.child.once('exit', r));
  sim.child.kill('SIGTERM');
  const t = setTimeout(() => sim.child.kill('SIGKILL'), 5000);
  await gone;
  clearTimeout(t);
}

// ------------------------------------------------------------------------------- object storage
/** With --s3: the store, the tortured lake's URL and the folder its objects are downloaded into. */
/** @type {{ url?: string, view?: string, server?: import('s3rver').default, objects?: import('../src/state/objects.js').ObjectStore }} */
const store = {};

/** @param {string} tmp */
async function startStore(tmp) {
  const { default: S3rver } = await import('s3rver');
  const dir = join(tmp, 's3rver');
  mkdirSync(dir);
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [{ name: 'torture' }] });
  store.server = server;
  const { port } = await server.run();
  // The children inherit these; the downloads in this process read them too.
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'torture',
    AWS_REGION: 'us-east-1',
    AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}`,
    CHAINLAKE_S3_PATH_STYLE: '1',
    CHAINLAKE_CACHE: join(tmp, 'cache'),
    AWS_EC2_METADATA_DISABLED: 'true',
  });
  store.url = 's3://torture/tortured';
  /** @type {typeof import('../src/state/s3.js')} */
  const { S3Objects } = await import(join(ROOT, 'dist', 'state', 's3.js'));
  store.objects = await S3Objects.open(store.url);
  return `http://127.0.0.1:${port}`;
}

/** Where a command reaches `lake`: the tortured lake's URL with --s3, else the folder. */
const lakeArg = (/** @type {string} */ lake) => (store.url !== undefined && lake === store.view ? store.url : lake);

/** With --s3: the tortured lake's objects, downloaded afresh into its folder, for the checks. */
/** @param {string} lake */
async function refreshView(lake) {
  const objects = store.objects;
  if (store.view === undefined || lake !== store.view || !objects) return;
  rmSync(lake, { recursive: true, force: true });
  mkdirSync(lake, { recursive: true });
  for (const { key } of await objects.list('')) {
    const got = await objects.get(key);
    if (!got) continue; // deleted since the listing
    mkdirSync(dirname(join(lake, key)), { recursive: true });
    writeFileSync(join(lake, key), got.body);
  }
}

/** @typedef {{ delayMs: number, signal: NodeJS.Signals }} Kill */
/**
 * @typedef {object} Ended
 * @property {number} pid
 * @property {boolean} killed
 * @property {boolean} timedOut
 * @property {number} [signalSentAt] ms from the spawn
 * @property {number} [signalEpoch]
 * @property {number | null} code
 * @property {NodeJS.Signals | null} signal
 * @property {number} ms
 * @property {number} startupMs
 */

/**
 * The pipeline's run into `lake` against the simulator at `url`.
 * @param {string} lake
 * @param {string} url
 * @param {string} log
 * @param {Kill} [kill]
 */
function runOnce(lake, url, log, kill) {
  return spawnOnce([CLI, 'run', opts.pipeline, '--lake', lakeArg(lake), '--data-url', url, '--metrics-url', url, '--node-url', url, '--flush-rows', String(opts.flushRows)], log, kill);
}

/**
 * `chainlake compact` of every table of `lake`.
 * @param {string} lake
 * @param {string} log
 * @param {Kill} [kill]
 */
function compactOnce(lake, log, kill) {
  return spawnOnce([CLI, 'compact', '--lake', lakeArg(lake)], log, kill);
}

/**
 * One CLI command. With `kill` = { delayMs, signal }, the signal is sent after the delay if the
 * process is still alive. Output goes to `log`.
 * @param {string[]} args
 * @param {string} log
 * @param {Kill} [kill]
 * @returns {Promise<Ended>}
 */
function spawnOnce(args, log, kill) {
  const fd = openSync(log, 'w');
  const t0 = performance.now();
  const epoch = Date.now();
  const started = opts.unreaped ? spawnUnreaped(args, fd) : spawnChild(args, fd);
  closeSync(fd);
  return started.then(({ pid, send, ended }) => {
    /** @type {Pick<Ended, 'pid' | 'killed' | 'timedOut' | 'signalSentAt' | 'signalEpoch'>} */
    const r = { pid, killed: false, timedOut: false };
    /** @type {NodeJS.Timeout | undefined} */
    let killTimer;
    let over = false;
    const cap = Math.max(1000, Math.min(opts.attemptTimeout * 1000, deadline - Date.now()));
    const capTimer = setTimeout(() => {
      r.timedOut = true;
      send('SIGKILL');
    }, cap);
    if (kill) {
      killTimer = setTimeout(() => {
        if (over) return;
        r.killed = true;
        r.signalSentAt = performance.now() - t0;
        r.signalEpoch = Date.now();
        send(kill.signal);
      }, kill.delayMs);
    }
    return ended.then(({ code, signal }) => {
      over = true;
      clearTimeout(capTimer);
      clearTimeout(killTimer);
      return { ...r, code, signal, ms: performance.now() - t0, startupMs: firstLogAt(log) - epoch };
    });
  });
}

/**
 * @typedef {object} Started
 * @property {number} pid
 * @property {(sig: NodeJS.Signals) => void} send
 * @property {Promise<{ code: number | null, signal: NodeJS.Signals | null }>} ended
 */

/**
 * A child of this process, reaped by Node as it ends.
 * @param {string[]} args
 * @param {number} fd
 * @returns {Promise<Started>}
 */
async function spawnChild(args, fd) {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', fd, fd] });
  children.add(child);
  /** @type {Started['ended']} */
  const ended = new Promise((res) =>
    child.on('exit', (code, signal) => {
      children.delete(child);
      res({ code, signal });
    }),
  );
  // A spawn that failed (no pid) says so as an 'exit' with an error code, as a run that failed.
  return {
    pid: child.pid ?? 0,
    send: (sig) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(sig);
    },
    ended,
  };
}

/** Keepers (`sleep`) of the commands started with --unreaped, the newest last. @type {ChildProcess[]} */
const keepers = [];
/** --unreaped: the last command's pid, and how many commands started while the one before was a zombie. */
const unreaped = { last: 0, besideZombie: 0 };

/**
 * The fields of /proc/<pid>/stat after the command name (undefined once the pid is gone).
 * @param {number} pid
 */
function procStat(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return f.slice(f.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * The command under a parent that never reaps it: sh starts it in the background, says its pid on
 * fd 3 and becomes `sleep`. Its end is read from /proc (state Z, and the exit status). The
 * previous command's keeper goes when this one ends, so every command starts while the one before
 * it is still a zombie (if it was killed).
 * @param {string[]} args
 * @param {number} fd
 * @returns {Promise<Started>}
 */
async function spawnUnreaped(args, fd) {
  if (unreaped.last && procStat(unreaped.last)?.[0] === 'Z') unreaped.besideZombie++;
  const keeper = spawn('sh', ['-c', '"$@" 3>&- & echo $! >&3; exec sleep 100000', 'sh', process.execPath, ...args], { cwd: ROOT, stdio: ['ignore', fd, fd, 'pipe'] });
  children.add(keeper);
  keeper.on('exit', () => children.delete(keeper));
  keepers.push(keeper);
  // The keeper (sleep) keeps fd 3 open: the pid is the first line, not the whole stream.
  /** @type {number} */
  const pid = await new Promise((res, rej) => {
    let said = '';
    keeper.stdio[3]?.on('data', (d) => {
      said += d;
      if (said.includes('\n')) res(Number(said.trim()));
    });
    keeper.on('exit', () => rej(new Fail(`the shell starting ${args.join(' ')} ended before saying its pid`)));
  });
  if (!Number.isSafeInteger(pid) || pid <= 0) throw new Fail(`the shell said no pid for ${args.join(' ')}`);
  grandchildren.add(pid);
  unreaped.last = pid;
  const status = () => procStat(pid);
  /** @type {Started['ended']} */
  const ended = new Promise((res) => {
    const poll = setInterval(() => {
      const f = status();
      if (f && f[0] !== 'Z') return;
      clearInterval(poll);
      // exit_code (field 52 of proc(5)) as waitpid reports it.
      const w = f ? Number(f[49]) : 0;
      const signal = w & 0x7f ? (/** @type {NodeJS.Signals[]} */ (Object.keys(osConstants.signals)).find((k) => osConstants.signals[k] === (w & 0x7f)) ?? null) : null;
      for (const k of keepers.splice(0, keepers.length - 1)) k.kill('SIGKILL');
      grandchildren.delete(pid);
      res({ code: signal ? null : (w >> 8) & 0xff, signal });
    }, 10);
  });
  return {
    pid,
    send: (sig) => {
      const f = status();
      try {
        if (f && f[0] !== 'Z') process.kill(pid, sig);
      } catch {
        // ended meanwhile
      }
    },
    ended,
  };
}

// ------------------------------------------------------------------------------------- lake files
const isTableDir = (/** @type {string} */ name) => !name.startsWith('_') || name === '_rejects';

/**
 * The table folders of a lake (and _rejects last).
 * @param {string} lake
 */
function lakeTables(lake) {
  return readdirSync(lake, { withFileTypes: true })
    .filter((e) => e.isDirectory() && isTableDir(e.name))
    .map((e) => e.name)
    .sort((a, b) => Number(a === '_rejects') - Number(b === '_rejects') || a.localeCompare(b));
}

/**
 * The files under `dir` (none when it is missing), sorted.
 * @param {string} dir
 * @param {(path: string) => boolean} [pred]
 * @returns {string[]}
 */
function walk(dir, pred = () => true) {
  /** @type {string[]} */
  const out = [];
  if (!existsSync(dir)) return out;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(p, pred));
    else if (pred(p)) out.push(p);
  }
  return out.sort();
}

/**
 * A partition's state file as this script reads it (src/state/store.ts has the whole shape).
 * @typedef {object} StateFile
 * @property {string} table
 * @property {string[]} [files]
 * @property {number} [rows]
 * @property {number} [rejects]
 * @property {unknown} [pending]
 * @property {{ nextBlock?: number, window?: unknown }} [cursor]
 * @property {{ status?: string }} [lastRun]
 */

/**
 * The partition states of a lake (a state that does not parse: `broken`) and its state temp files.
 * @param {string} lake
 */
function loadStates(lake) {
  const root = join(lake, '_state');
  /** @type {Array<{ file: string, s?: StateFile, broken?: string }>} */
  const states = [];
  /** @type {string[]} */
  const tmp = [];
  for (const f of walk(root)) {
    if (basename(f).includes('.tmp-')) tmp.push(relative(lake, f));
    else if (f.endsWith('.json')) {
      try {
        states.push({ file: relative(lake, f), s: JSON.parse(readFileSync(f, 'utf8')) });
      } catch (e) {
        states.push({ file: relative(lake, f), broken: firstLine(e) });
      }
    }
  }
  return { states, tmp };
}

/**
 * What a command left in the lake: half-done commits, state temp files, staged files, the lock.
 * @param {string} lake
 */
async function inspectLake(lake) {
  const { states, tmp } = loadStates(lake);
  const pending = states.filter(({ s }) => s?.pending).length;
  return { pending, tmp: tmp.length, stagingFiles: walk(join(lake, '_staging')).length, lock: await lockHeld(lake) };
}

/** Where lakeProblems rolls a copy of a lake forward (a folder of the torture's work dir). */
let checkedCopy = '';

/**
 * The invariants that must hold after a kill at any instant, as problems ([] when they hold). A
 * killed command may leave a half-done commit, which the next one rolls forward (the replaced files
 * are still there, the new ones in staging): they are checked on a copy of the lake rolled forward
 * by the store's own recovery, as the next command will find it. On that copy `chainlake check`
 * must pass (files owned and readable, keys, rows as the states say, cursors...), and what it does
 * not look at must hold too (outsideCheck).
 * @param {string} lake
 * @returns {Promise<string[]>}
 */
async function lakeProblems(lake) {
  rmSync(checkedCopy, { recursive: true, force: true });
  // A run killed within its first instants may not have made the folder.
  if (!existsSync(lake)) return [];
  cpSync(lake, checkedCopy, { recursive: true });
  const problems = [];
  try {
    // With the Iceberg publisher of a writer, at the lake's own location: the copy's metadata then
    // reads as the lake's will once the next command rolled it forward.
    const original = pathToFileURL(resolve(lake)).href;
    await new StateStore(checkedCopy, { publisher: (store) => icebergPublisher(store, { uri: original }) }).recover();
  } catch (e) {
    problems.push(`its half-done commits cannot be rolled forward: ${firstLine(e)}`);
  }
  problems.push(...(await failedChecks(checkedCopy)), ...(await outsideCheck(checkedCopy)));
  return problems;
}

const firstLine = (/** @type {unknown} */ e) => String(e instanceof Error ? e.message : e).split('\n')[0];

/**
 * `chainlake check` on `lake`, its checks run in this process as the command runs them: each failed
 * check as "check <name> (<table>): <detail>"; a folder the command would refuse, or checks that
 * throw or give no answer within --attempt-timeout, is a problem too.
 * @param {string} lake
 * @returns {Promise<string[]>}
 */
async function failedChecks(lake) {
  try {
    existingLake(lake, '--lake');
  } catch (e) {
    return [`chainlake check refuses the lake: ${firstLine(e)}`];
  }
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  /** @type {Promise<never>} */
  const late = new Promise((_, rej) => {
    timer = setTimeout(() => rej(new Fail(`chainlake check gave no answer within ${opts.attemptTimeout} s on ${lake}`)), opts.attemptTimeout * 1000);
  });
  const db = await lakeDatabase(lake);
  const conn = await connectWarehouse(db);
  try {
    const results = await Promise.race([runChecks(conn, lake), late]);
    return results.filter((c) => c.status === 'fail').map((c) => `check ${c.check} (${c.table}): ${c.detail}`);
  } catch (e) {
    if (e instanceof Fail) throw e;
    return [`chainlake check could not run: ${firstLine(e)}`];
  } finally {
    clearTimeout(timer);
    conn.closeSync();
    db.closeSync();
  }
}

/**
 * What `chainlake check` does not look at: the files a state lists outside its table's folder
 * (raw pages, rejects) are there; a folder readers glob that is not one of check's tables
 * (_rejects) holds only Parquet files that a state lists and DuckDB reads; no table folder holds
 * another kind of file.
 */
const CHECKED_TABLES = new Set(LAKE_TABLES.map((d) => d.table));
/** @param {string} lake */
async function outsideCheck(lake) {
  /** @type {string[]} */
  const problems = [];
  /** @type {Set<string>} */
  const listed = new Set();
  for (const { file, s } of loadStates(lake).states) {
    // An unreadable state is check's ("partition states readable").
    if (!s) continue;
    for (const f of s.files ?? []) {
      listed.add(f);
      const checked = CHECKED_TABLES.has(s.table) && f.startsWith(`${s.table}/`);
      if (!checked && !existsSync(join(lake, f))) problems.push(`${file}: lists ${f}, which is not in the lake (lost)`);
    }
  }
  for (const table of lakeTables(lake)) {
    const checked = CHECKED_TABLES.has(table);
    for (const f of walk(join(lake, table)).map((p) => relative(lake, p))) {
      // The table's Iceberg metadata: `chainlake check` compares its snapshot with the states.
      if (f.startsWith(`${table}/metadata/`)) {
        if (!/\/metadata\/(v\d+\.metadata\.json|version-hint\.text|[0-9a-f-]+-m\d+\.avro|snap-\d+-1-[0-9a-f-]+\.avro)$/.test(f)) problems.push(`${f}: not an Iceberg metadata file, in a table's metadata folder`);
        continue;
      }
      if (!f.endsWith('.parquet')) problems.push(`${f}: a non-Parquet file in a table folder`);
      else if (checked) continue;
      else if (!listed.has(f)) problems.push(`${f}: in a table folder but listed by no partition state (orphan: readers see it)`);
      else {
        try {
          await scalar(`SELECT count(*) FROM read_parquet(${q(join(lake, f))})`);
        } catch (e) {
          problems.push(`${f}: unreadable: ${firstLine(e)}`);
        }
      }
    }
  }
  return problems;
}

// ----------------------------------------------------------------------------------------- DuckDB
const db = await DuckDBInstance.create(':memory:', { threads: '2' });
const conn = await db.connect();
const q = (/** @type {string} */ s) => `'${s.replace(/'/g, "''")}'`;
/**
 * The rows of a query, each as an object of JS values.
 * @param {string} sql
 * @returns {Promise<Array<Record<string, any>>>}
 */
async function rows(sql) {
  return (await conn.runAndReadAll(sql)).getRowObjectsJS();
}
/** @param {string} sql */
async function scalar(sql) {
  const r = (await conn.runAndReadAll(sql)).getRowsJS();
  return Number(r[0][0]);
}

// A table's key (its stream's declaration) describes a mismatch row by row. _rejects is no stream:
// a rejected row is told by where it came from and what it was.
const REJECTS_KEY = ['table_name', 'partition_id', 'raw_json'];
const keyOf = (/** @type {string} */ table) => STREAM_BY_TABLE.get(table)?.key ?? (table === '_rejects' ? REJECTS_KEY : undefined);
// Columns that legitimately differ between two runs: a rejected row's run, and what a run stamps
// with its own clock (when a snapshot was taken; declared as stamps).
/** @type {Record<string, string[]>} */
const VOLATILE = { _rejects: ['run_id', 'rejected_at'] };

// Tables keyed by the snapshot time (the node's state) gain a snapshot per run, so an attempt that
// got that far adds one: they are compared as sets of distinct rows, without the time.
const SNAPSHOT_TABLES = new Set(STREAMS.filter((d) => d.key.includes('snapshot_at')).map((d) => d.table));
const isSnapshotTable = (/** @type {string} */ table) => SNAPSHOT_TABLES.has(table);
/** @param {string} table */
const volatileOf = (table) => {
  const decl = STREAM_BY_TABLE.get(table);
  return [...(VOLATILE[table] ?? []), ...(decl ? stampColumns(decl) : [])];
};
// A partition of a table merged as a whole counts the rows of its last fetch; with a time cursor
// that fetch starts where the last one ended, so its count depends on where the kills fell.
const LAST_FETCH_ROWS = new Set(STREAMS.filter((d) => d.mergeScope === 'table' && d.timeCursor).map((d) => d.table));

const hasParquet = (/** @type {string} */ dir) => walk(dir, (p) => p.endsWith('.parquet')).length > 0;
/** @type {(lake: string, table: string) => string} */
const src = (lake, table) => `read_parquet(${q(join(lake, table, '**', '*.parquet'))}, union_by_name=true, hive_partitioning=false)`;

/**
 * A table of both lakes compared: row counts, rows only in the tortured lake (extra) and only in
 * the clean one (missing), '?' where the comparison could not run.
 * @typedef {{ table: string, clean: number | '?', tortured: number | '?', extra: number | '?', missing: number | '?', ok: boolean, notes: string[] }} Comparison
 */
/** The attempt (its number, or "compaction attempt n") that each process id was. @typedef {Map<number, number | string>} Attempts */

/**
 * Compares one table of both lakes as multisets of rows.
 * @param {string} clean
 * @param {string} tortured
 * @param {string} table
 * @param {Attempts} pidToAttempt
 * @param {string[]} [exclude]
 * @returns {Promise<Comparison>}
 */
async function compareTable(clean, tortured, table, pidToAttempt, exclude = []) {
  try {
    return await compareTableUnsafe(clean, tortured, table, pidToAttempt, exclude);
  } catch (e) {
    return { table, clean: '?', tortured: '?', extra: '?', missing: '?', ok: false, notes: [`cannot compare: ${firstLine(e)}`] };
  }
}

/**
 * @param {string} clean
 * @param {string} tortured
 * @param {string} table
 * @param {Attempts} pidToAttempt
 * @param {string[]} exclude
 */
async function compareTableUnsafe(clean, tortured, table, pidToAttempt, exclude) {
  /** @type {Comparison & { clean: number, tortured: number, extra: number, missing: number }} */
  const r = { table, clean: 0, tortured: 0, extra: 0, missing: 0, ok: true, notes: [] };
  const cHas = hasParquet(join(clean, table));
  const tHas = hasParquet(join(tortured, table));
  if (cHas) r.clean = await scalar(`SELECT count(*) FROM ${src(clean, table)}`);
  if (tHas) r.tortured = await scalar(`SELECT count(*) FROM ${src(tortured, table)}`);
  if (!cHas || !tHas) {
    r.missing = tHas ? 0 : r.clean;
    r.extra = cHas ? 0 : r.tortured;
    r.ok = r.clean === r.tortured;
    if (!r.ok) r.notes.push(`${cHas ? 'tortured' : 'clean'} lake has no Parquet file for ${table}`);
    return r;
  }
  const snapshot = isSnapshotTable(table);
  if (snapshot) {
    const stamps = volatileOf(table).join(', ');
    r.clean = await scalar(`SELECT count(*) FROM (SELECT DISTINCT * EXCLUDE (${stamps}) FROM ${src(clean, table)})`);
    r.tortured = await scalar(`SELECT count(*) FROM (SELECT DISTINCT * EXCLUDE (${stamps}) FROM ${src(tortured, table)})`);
  }
  /** @type {(lake: string) => Promise<Array<[string, string]>>} */
  const columns = async (lake) => (await rows(`DESCRIBE SELECT * FROM ${src(lake, table)}`)).map((x) => [x.column_name, x.column_type]);
  const cCols = await columns(clean);
  const tCols = await columns(tortured);
  const sig = (/** @type {Array<[string, string]>} */ cols) => cols.map(([n, t]) => `${n} ${t}`).sort().join(', ');
  if (sig(cCols) !== sig(tCols)) {
    r.ok = false;
    r.notes.push(`schemas differ: clean (${sig(cCols)}) vs tortured (${sig(tCols)})`);
    return r;
  }
  const volatile = volatileOf(table);
  const cols = cCols.map(([n]) => n).filter((n) => !volatile.includes(n) && !exclude.includes(n));
  const list = cols.map((n) => `"${n}"`).join(', ');
  const distinct = snapshot ? 'DISTINCT ' : '';
  await conn.run(`CREATE OR REPLACE TEMP TABLE c AS SELECT ${distinct}${list} FROM ${src(clean, table)}`);
  await conn.run(`CREATE OR REPLACE TEMP TABLE t AS SELECT ${distinct}${list}, ${snapshot ? 'min(filename)' : 'filename'} AS __file FROM read_parquet(${q(join(tortured, table, '**', '*.parquet'))}, union_by_name=true, hive_partitioning=false, filename=true)${snapshot ? ' GROUP BY ALL' : ''}`);
  r.extra = await scalar(`SELECT count(*) FROM (SELECT ${list} FROM t EXCEPT ALL SELECT ${list} FROM c)`);
  r.missing = await scalar(`SELECT count(*) FROM (SELECT ${list} FROM c EXCEPT ALL SELECT ${list} FROM t)`);
  r.ok = r.extra === 0 && r.missing === 0 && r.clean === r.tortured;
  if (!r.ok) {
    // Describe it by key: duplicated keys (with the files holding them) and keys that are missing.
    const key = (keyOf(table) ?? cols).filter((k) => cols.includes(k));
    const kl = key.map((n) => `"${n}"`).join(', ');
    const dupC = await scalar(`SELECT count(*) FROM (SELECT ${kl} FROM c GROUP BY ALL HAVING count(*) > 1)`);
    const dupT = await scalar(`SELECT count(*) FROM (SELECT ${kl} FROM t GROUP BY ALL HAVING count(*) > 1)`);
    r.notes.push(`keys (${key.join(', ')}) occurring more than once: clean ${dupC}, tortured ${dupT}`);
    const on = key.map((k) => `ct."${k}" IS NOT DISTINCT FROM tt."${k}"`).join(' AND ') || 'true';
    const counts = `WITH ct AS (SELECT ${kl}, count(*) AS n FROM c GROUP BY ALL), tt AS (SELECT ${kl}, count(*) AS n, list(DISTINCT __file ORDER BY __file) AS files FROM t GROUP BY ALL)`;
    const over = await rows(`${counts} SELECT ${key.map((k) => `tt."${k}"`).join(', ')}, tt.n AS n, coalesce(ct.n, 0) AS cn, tt.files AS files FROM tt LEFT JOIN ct ON ${on} WHERE tt.n > coalesce(ct.n, 0) ORDER BY tt.n - coalesce(ct.n, 0) DESC LIMIT 3`);
    for (const s of over) {
      const files = /** @type {string[]} */ (s.files).map((f) => describeFile(tortured, table, f, pidToAttempt));
      r.notes.push(`key ${key.map((k) => `${k}=${fmt(s[k])}`).join(' ')}: ${s.n} row(s) in tortured vs ${s.cn} in clean; files: ${files.join('; ')}`);
    }
    const under = await rows(`${counts} SELECT ${key.map((k) => `ct."${k}"`).join(', ')}, ct.n AS cn, coalesce(tt.n, 0) AS n FROM ct LEFT JOIN tt ON ${on} WHERE ct.n > coalesce(tt.n, 0) LIMIT 3`);
    for (const s of under) r.notes.push(`key ${key.map((k) => `${k}=${fmt(s[k])}`).join(' ')}: ${s.n} row(s) in tortured vs ${s.cn} in clean (missing)`);
    const underCount = await scalar(`${counts} SELECT count(*) FROM ct LEFT JOIN tt ON ${on} WHERE ct.n > coalesce(tt.n, 0)`);
    const overCount = await scalar(`${counts} SELECT count(*) FROM tt LEFT JOIN ct ON ${on} WHERE tt.n > coalesce(ct.n, 0)`);
    r.notes.push(`keys with more rows in tortured: ${overCount}; keys with fewer: ${underCount}`);
    if (!over.length && !under.length) {
      const diff = await rows(`SELECT ${kl} FROM (SELECT ${list} FROM t EXCEPT ALL SELECT ${list} FROM c) LIMIT 3`);
      for (const s of diff) r.notes.push(`same key, different values: ${key.map((k) => `${k}=${fmt(s[k])}`).join(' ')}`);
    }
  }
  return r;
}

/**
 * Columns of a table whose values differ between two uninterrupted runs (each column compared as a
 * multiset on its own), with an example; [] when the table is equal.
 * @param {string} a
 * @param {string} b
 * @param {string} table
 */
async function unstableColumns(a, b, table) {
  if (!hasParquet(join(a, table)) || !hasParquet(join(b, table))) return [];
  const volatile = volatileOf(table);
  const cols = (await rows(`DESCRIBE SELECT * FROM ${src(a, table)}`)).map((x) => x.column_name).filter((n) => !volatile.includes(n));
  /** @type {Array<{ col: string, example: string }>} */
  const out = [];
  for (const col of cols) {
    const one = (/** @type {string} */ lake) => `SELECT "${col}" AS v FROM ${src(lake, table)}`;
    const d = await rows(`SELECT v::VARCHAR AS v FROM (${one(a)} EXCEPT ALL ${one(b)}) LIMIT 1`).catch(() => [{ v: '(not in both)' }]);
    if (d.length) {
      const e = await rows(`SELECT v::VARCHAR AS v FROM (${one(b)} EXCEPT ALL ${one(a)}) LIMIT 1`).catch(() => []);
      out.push({ col, example: `${fmt(d[0].v)} vs ${fmt(e[0]?.v)}` });
    }
  }
  return out;
}

/** @param {unknown} v */
function fmt(v) {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s && s.length > 24 ? s.slice(0, 21) + '...' : s;
}

/**
 * A lake file -> "file (attempt n, state _state/<table>/<slug>.json)".
 * @param {string} lake
 * @param {string} table
 * @param {string} file
 * @param {Attempts} pidToAttempt
 */
function describeFile(lake, table, file, pidToAttempt) {
  const rel = relative(lake, file);
  const m = /^(.*-[0-9a-f]{10})-(\d+)-\d+-\d+/.exec(basename(file));
  if (!m) return rel;
  const attempt = pidToAttempt.get(Number(m[2]));
  const stateTable = table === '_rejects' ? rel.split('/')[1] : table;
  return `${rel} (written by ${typeof attempt === 'number' ? `attempt ${attempt}` : (attempt ?? `pid ${m[2]}`)}; state _state/${stateTable}/${m[1]}.json)`;
}

/**
 * Partition state counters and cursors that must match (refreshedAt and run ids may not).
 * @param {string} clean
 * @param {string} tortured
 */
async function compareStates(clean, tortured) {
  const pick = (/** @type {string} */ lake) => {
    /** @type {Map<string, StateFile>} */
    const m = new Map();
    for (const { file, s } of loadStates(lake).states) if (s) m.set(file, s);
    return m;
  };
  const c = pick(clean);
  const t = pick(tortured);
  const out = [];
  for (const [file, a] of c) {
    const b = t.get(file);
    if (!b) {
      out.push(`${file}: missing in the tortured lake`);
      continue;
    }
    const diffs = [];
    // A snapshot table's state counts every snapshot it holds: one per attempt that got that far.
    if (a.rows !== b.rows && !isSnapshotTable(a.table) && !LAST_FETCH_ROWS.has(a.table)) diffs.push(`rows ${a.rows} vs ${b.rows}`);
    if (a.rejects !== b.rejects) diffs.push(`rejects ${a.rejects} vs ${b.rejects}`);
    if (a.cursor?.nextBlock !== b.cursor?.nextBlock) diffs.push(`cursor.nextBlock ${a.cursor?.nextBlock} vs ${b.cursor?.nextBlock}`);
    if (!!a.cursor?.window !== !!b.cursor?.window) diffs.push(`cursor.window ${JSON.stringify(a.cursor?.window)} vs ${JSON.stringify(b.cursor?.window)}`);
    if (a.lastRun?.status !== b.lastRun?.status) diffs.push(`lastRun.status ${a.lastRun?.status} vs ${b.lastRun?.status}`);
    if (b.pending) diffs.push('pending commit left');
    if (diffs.length) out.push(`${file}: ${diffs.join(', ')} (clean vs tortured)`);
  }
  for (const file of t.keys()) if (!c.has(file)) out.push(`${file}: only in the tortured lake`);
  return out;
}

/**
 * Whether a command's log says the lake's lock refused it.
 * @param {string} log
 */
function refusedByLock(log) {
  return readFileSync(log, 'utf8').includes('in use by another chainlake run');
}

/** Whether a writer's lock is held in the lake (none after a command that ended, SIGTERM included). */
async function lockHeld(/** @type {string} */ lake) {
  return LakeLock.held(lake);
}

/** Time (epoch ms) of a run's first JSON log line: the CLI has loaded and opened the lake. */
function firstLogAt(/** @type {string} */ log) {
  try {
    for (const line of readFileSync(log, 'utf8').split('\n')) {
      try {
        const t = JSON.parse(line).time;
        if (typeof t === 'number') return t;
      } catch {
        // not a log line
      }
    }
  } catch {
    // no log
  }
  return NaN;
}

/** The last JSON log line of a run (logged before `until`, epoch ms), as "msg table partition"; else its last line. */
function lastLog(/** @type {string} */ log, until = Infinity) {
  /** @type {string[]} */
  let lines = [];
  try {
    lines = readFileSync(log, 'utf8').trim().split('\n').filter(Boolean);
  } catch {
    // no log
  }
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      const j = JSON.parse(lines[i]);
      if (!(j.time <= until)) continue;
      return `${j.msg}${j.table ? ` ${j.table}` : ''}${j.partition ? ` ${j.partition}` : ''}`;
    } catch {
      // the run report or an error line
    }
  }
  return lines.length && until === Infinity ? lines[lines.length - 1].slice(0, 80) : '(no output)';
}

/** The lines of a command's log that say why it failed (its error and stack), joined. */
function stderrTail(/** @type {string} */ log) {
  try {
    return readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('chainlake:') || /^\s+at /.test(l) || /Error/.test(l))
      .slice(0, 6)
      .join(' | ');
  } catch {
    return '';
  }
}

/** @type {(s: unknown, n: number) => string} */
const pad = (s, n) => String(s).padEnd(n);
/** @type {(s: unknown, n: number) => string} */
const lpad = (s, n) => String(s).padStart(n);

/**
 * @typedef {{ after: Awaited<ReturnType<typeof inspectLake>>, bad: string[], what: string }} Seen
 */
/**
 * The lake after an attempt (`r`, from spawnOnce, with the `kill` it was given), its broken invariants, and a line for the log.
 * @param {string} lake
 * @param {Ended} r
 * @param {Kill} [kill]
 * @returns {Promise<Seen>}
 */
async function inspectAttempt(lake, r, kill) {
  await refreshView(lake);
  const after = await inspectLake(lake);
  const bad = await lakeProblems(lake);
  const what = kill && r.killed
    ? `${kill.signal} at ${Math.round(r.signalSentAt ?? 0)} ms -> ${r.signal ?? `exit ${r.code}`}`
    : `${kill ? `(${kill.signal} due at ${kill.delayMs} ms, ended first) ` : ''}exit ${r.code ?? r.signal} in ${Math.round(r.ms)} ms`;
  return { after, bad, what };
}

/**
 * What ends the torture (a hang, an exit 2) and what fails it (a lock left after a graceful stop, a
 * broken invariant), the same for a run and a compaction; `name` says which (`attempt 3`).
 * @param {string} name
 * @param {Ended} r
 * @param {Kill | undefined} kill
 * @param {string} log
 * @param {Seen} seen
 * @param {string[]} failures
 */
function judgeAttempt(name, r, kill, log, { after, bad, what }, failures) {
  if (r.timedOut) throw new Fail(`${name}: still running after ${opts.attemptTimeout} s (killed); log ${log}`);
  if (r.code === 2) throw new Fail(`${name}: exit 2 (usage/config error): ${stderrTail(log)}; log ${log}`);
  if (r.killed && kill?.signal === 'SIGTERM' && r.code !== null && after.lock) failures.push(`${name}: exited ${r.code} after SIGTERM but left its lock held`);
  // Every earlier command is dead by now (killed or ended): its lock must not refuse this one.
  if (refusedByLock(log)) failures.push(`${name}: refused by the lock of a dead run: ${stderrTail(log)}`);
  for (const b of bad) failures.push(`${name} (${what}): ${b}`);
  if (bad.length) say(`             INVARIANT BROKEN: ${bad.slice(0, 3).join(' | ')}${bad.length > 3 ? ` (+${bad.length - 3})` : ''}`);
}

// ------------------------------------------------------------------------------------- compaction
/**
 * Step 5: `chainlake compact` of the tortured lake (complete by now), killed at random moments
 * until `--compact-kills` signals have landed on a live compaction, then rerun until one exits 0;
 * the lake's invariants are checked after every attempt and the final comparison (step 4) then
 * reads the compacted lake. The control lake is compacted first, uninterrupted: it must still equal
 * the clean lake, and its length scales the kill delays.
 * @param {{ clean: string, control: string, tortured: string, logs: string, unstable: Record<string, string[]>, pidToAttempt: Attempts, failures: string[] }} o
 */
async function tortureCompaction({ clean, control, tortured, logs, unstable, pidToAttempt, failures }) {
  const k = await compactOnce(control, join(logs, 'compact-control.log'));
  if (k.code !== 0) throw new Fail(`the uninterrupted compaction of the control lake exited ${k.code ?? k.signal}: ${stderrTail(join(logs, 'compact-control.log'))}`);
  const summary = readFileSync(join(logs, 'compact-control.log'), 'utf8').match(/\d+ data files -> \d+/)?.[0] ?? 'nothing to merge';
  for (const t of lakeTables(clean)) {
    const r = await compareTable(clean, control, t, new Map(), unstable[t]);
    if (!r.ok) failures.push(`compaction alone: ${t}: clean ${r.clean} rows, compacted control ${r.tortured} (extra ${r.extra}, missing ${r.missing})`);
  }
  say(`compaction of the control lake: exit 0 in ${(k.ms / 1000).toFixed(2)} s (${summary}); kill delays from 50 ms to ~${Math.round(k.ms * 1.1)} ms`);
  let kills = 0;
  let attempts = 0;
  let reruns = 0;
  for (;;) {
    if (Date.now() > deadline) throw new Fail(`overall timeout (${opts.timeout} s) in the compaction step after ${kills} kills`);
    const n = ++attempts;
    const log = join(logs, `compact-${String(n).padStart(4, '0')}.log`);
    /** @type {Kill | undefined} */
    let kill;
    if (kills < opts.compactKills) kill = { delayMs: Math.round(50 + rand() * Math.max(50, k.ms * 1.1 - 50)), signal: rand() < 0.25 ? 'SIGTERM' : 'SIGKILL' };
    else if (++reruns > 20) throw new Fail('no compaction exited 0 within 20 reruns after the kills');
    const r = await compactOnce(tortured, log, kill);
    pidToAttempt.set(r.pid, `compaction attempt ${n}`);
    const seen = await inspectAttempt(tortured, r, kill);
    const { after } = seen;
    if (r.killed) kills++;
    if (!opts.quiet) say(`compact ${lpad(n, 3)}: ${pad(seen.what, 40)} after: ${after.pending} half-done commit(s), ${after.tmp} state tmp, ${after.stagingFiles} staged file(s)${after.lock ? ', lock left' : ''}`);
    judgeAttempt(`compaction attempt ${n}`, r, kill, log, seen, failures);
    if (kills >= opts.compactKills && !r.killed && r.code === 0) break;
  }
  say(`compaction kills: ${kills} in ${attempts} attempts`);
  return kills;
}

// ------------------------------------------------------------------------------------------- main
async function main() {
  const tmp = mkdtempSync(join(tmpdir(), 'chainlake-torture-'));
  const clean = join(tmp, 'clean');
  const tortured = join(tmp, 'tortured');
  const control = join(tmp, 'control');
  const logs = join(tmp, 'logs');
  mkdirSync(logs);
  checkedCopy = join(tmp, 'checked');
  const failures = [];
  let sim;
  let verdict = false;
  try {
    say(`chainlake torture: seed ${opts.seed}, pipeline ${relative(process.cwd(), opts.pipeline) || opts.pipeline}, flush-rows ${opts.flushRows}, kills ${opts.kills}, work dir ${tmp}`);
    if (opts.s3) {
      store.view = tortured;
      say(`S3-compatible server (s3rver) at ${await startStore(tmp)}: the tortured lake is ${store.url}, downloaded into ${tortured} for each check`);
    }
    sim = await startSimulator();
    say(`simulator at ${sim.url}`);

    const c = await runOnce(clean, sim.url, join(logs, 'clean.log'));
    if (c.code !== 0) throw new Fail(`the clean run exited ${c.code ?? c.signal}${c.timedOut ? ' (timed out)' : ''}: ${stderrTail(join(logs, 'clean.log'))} (log ${join(logs, 'clean.log')})`);
    say(`clean run: exit 0 in ${(c.ms / 1000).toFixed(2)} s`);
    // A second uninterrupted run into its own lake: what differs between the two is not caused by
    // kills. Such columns are reported (determinism failure) and left out of the kill comparison.
    const k = await runOnce(control, sim.url, join(logs, 'control.log'));
    if (k.code !== 0) throw new Fail(`the control run exited ${k.code ?? k.signal}: ${stderrTail(join(logs, 'control.log'))}`);
    /** @type {Record<string, string[]>} */
    const unstable = {};
    for (const t of lakeTables(clean)) {
      const u = await unstableColumns(clean, control, t);
      if (!u.length) continue;
      unstable[t] = u.map((x) => x.col);
      for (const x of u) failures.push(`determinism: ${t}.${x.col} differs between two uninterrupted runs (e.g. ${x.example}); left out of the kill comparison`);
      say(`control run: ${t}: column(s) ${u.map((x) => `${x.col} (${x.example})`).join(', ')} differ between two uninterrupted runs`);
    }
    if (!Object.keys(unstable).length) say('control run: a second uninterrupted run gives the same tables');
    // Kill delays (from the spawn) are drawn uniformly, 1 in 4 from 50 ms to the end of the CLI's
    // start (module loading, lock take-over, roll-forward of half-done commits: the first log line
    // comes after them) and 3 in 4 from there to 1.1 x the expected length of a run (requests,
    // transforms, Parquet writes, commits, the run report). Both estimates follow the runs: at
    // first the faster uninterrupted run, then the last observed values (a rerun on a complete
    // lake is incremental, hence shorter).
    let expectMs = Math.min(c.ms, k.ms);
    let startupMs = Math.min(c.startupMs, k.startupMs);
    if (!Number.isFinite(startupMs)) startupMs = expectMs / 2;
    say(`control run: exit 0 in ${(k.ms / 1000).toFixed(2)} s; CLI start ~${Math.round(startupMs)} ms; kill delays from 50 ms to ~${Math.round(expectMs * 1.1)} ms`);
    const phases = { start: 0, run: 0, end: 0 };

    const pidToAttempt = new Map();
    const stats = { attempts: 0, sigkill: 0, sigterm: 0, finishedBeforeKill: 0, exit1: 0, halfCommits: 0, tmpState: 0, staged: 0, reruns: 0, rounds: 0, refused: 0 };
    const MAX_RERUNS = 20;
    let done = false;
    let kills = 0;
    while (!done) {
      if (Date.now() > deadline) throw new Fail(`overall timeout (${opts.timeout} s) after ${stats.attempts} attempts and ${kills} kills`);
      const n = ++stats.attempts;
      const log = join(logs, `attempt-${String(n).padStart(4, '0')}.log`);
      /** @type {Kill | undefined} */
      let kill;
      if (kills < opts.kills) {
        // The same three draws every time, so the schedule of fractions and signals depends on the
        // seed only (the delays scale with the measured run times).
        const early = rand() < 0.25;
        const lo = early ? 50 : Math.max(50, startupMs);
        const hi = early ? Math.max(lo + 10, startupMs * 1.2) : Math.max(lo + 50, expectMs * 1.1);
        const delayMs = Math.round(lo + rand() * (hi - lo));
        /** @type {NodeJS.Signals} */
        let signal = rand() < 0.25 ? 'SIGTERM' : 'SIGKILL';
        // At least one graceful stop in a short torture: the last kill is a SIGTERM if none was.
        if (kills === opts.kills - 1 && opts.kills >= 2 && stats.sigterm === 0) signal = 'SIGTERM';
        kill = { delayMs, signal };
      } else if (++stats.reruns > MAX_RERUNS) throw new Fail(`no run exited 0 within ${MAX_RERUNS} reruns after the kills`);
      const r = await runOnce(tortured, sim.url, log, kill);
      pidToAttempt.set(r.pid, n);
      const seen = await inspectAttempt(tortured, r, kill);
      const { after } = seen;
      if (kill && r.killed) {
        kills++;
        if (kill.signal === 'SIGKILL') stats.sigkill++;
        else stats.sigterm++;
        const last = lastLog(log, r.signalEpoch);
        phases[last === '(no output)' ? 'start' : last.startsWith('run finished') ? 'end' : 'run']++;
      } else if (kill) stats.finishedBeforeKill++;
      if (after.pending) stats.halfCommits++;
      if (after.tmp) stats.tmpState++;
      if (after.stagingFiles) stats.staged++;
      if (!opts.quiet)
        say(
          `attempt ${lpad(n, 3)}: ${pad(seen.what, 40)} last log${r.killed ? ' before the signal' : ''}: ${pad(lastLog(log, r.killed ? r.signalEpoch : Infinity), 60)} after: ${after.pending} half-done commit(s), ${after.tmp} state tmp, ${after.stagingFiles} staged file(s)${after.lock ? ', lock left' : ''}`,
        );
      judgeAttempt(`attempt ${n}`, r, kill, log, seen, failures);
      if (refusedByLock(log)) stats.refused++;
      if (r.code === 1) {
        stats.exit1++;
        const tail = stderrTail(log);
        if (!r.killed || kill?.signal !== 'SIGTERM') say(`             exit 1 without SIGTERM: ${tail}`);
      }
      if (opts.rounds && kills < opts.kills && !r.killed && r.code === 0) {
        // A round ends: its lake must equal the clean one; the next round backfills from nothing.
        stats.rounds++;
        for (const t of lakeTables(clean)) {
          const c = await compareTable(clean, tortured, t, pidToAttempt, unstable[t]);
          if (!c.ok) failures.push(`round ${stats.rounds}: ${t}: clean ${c.clean} rows, tortured ${c.tortured} (extra ${c.extra}, missing ${c.missing})`);
        }
        for (const d of await compareStates(clean, tortured)) failures.push(`round ${stats.rounds}: state: ${d}`);
        rmSync(tortured, { recursive: true, force: true });
        continue;
      }
      if (!r.killed && r.code === 0) expectMs = r.ms;
      if (Number.isFinite(r.startupMs) && !r.killed) startupMs = r.startupMs;
      if (kills >= opts.kills && !r.killed && r.code === 0) done = true;
    }
    say(
      `kills: ${kills} (SIGKILL ${stats.sigkill}, SIGTERM ${stats.sigterm}); attempts ${stats.attempts}; reruns after the kills ${stats.reruns}; runs that ended before their kill ${stats.finishedBeforeKill}; exit-1 runs ${stats.exit1}${opts.rounds ? `; rounds ended (each lake equal to the clean one) ${stats.rounds}` : ''}`,
    );
    say(`runs refused by the lock: ${stats.refused} of ${stats.attempts}${opts.unreaped ? `; runs started while the one before was a zombie (--unreaped): ${unreaped.besideZombie}` : ''}`);
    say(`kills landed: ${phases.start} before the first log line (start, lock, roll-forward), ${phases.run} while the run worked, ${phases.end} after "run finished"`);
    say(`kill moments: ${stats.halfCommits} left a half-done commit (rolled forward by the next run), ${stats.tmpState} a state temp file, ${stats.staged} staged files`);

    const compactionKills = opts.compactKills > 0 ? await tortureCompaction({ clean, control, tortured, logs, unstable, pidToAttempt, failures }) : 0;

    // ------------------------------------------------------------------------------- final checks
    await refreshView(tortured);
    const fin = await inspectLake(tortured);
    if (fin.lock) failures.push('the lock is still held after the final run');
    if (fin.pending) failures.push(`${fin.pending} partition state(s) still carry a pending commit after the final run`);
    for (const p of await lakeProblems(tortured)) failures.push(`final lake: ${p}`);
    for (const p of await lakeProblems(clean)) failures.push(`clean lake: ${p}`);

    const tables = lakeTables(clean);
    for (const e of readdirSync(tortured, { withFileTypes: true }))
      if (e.isDirectory() && isTableDir(e.name) && !tables.includes(e.name) && hasParquet(join(tortured, e.name))) failures.push(`${e.name}: has files in the tortured lake only`);
    say();
    say(`${pad('table', 22)} ${lpad('clean', 8)} ${lpad('tortured', 8)} ${lpad('extra', 6)} ${lpad('missing', 7)}  result`);
    for (const t of tables) {
      const r = await compareTable(clean, tortured, t, pidToAttempt, unstable[t]);
      say(`${pad(t, 22)} ${lpad(r.clean, 8)} ${lpad(r.tortured, 8)} ${lpad(r.extra, 6)} ${lpad(r.missing, 7)}  ${r.ok ? 'equal' : 'MISMATCH'}${unstable[t] ? ` (without ${unstable[t].join(', ')})` : ''}`);
      for (const n of r.notes) say(`    ${n}`);
      if (!r.ok) failures.push(`${t}: clean ${r.clean} rows, tortured ${r.tortured} (extra ${r.extra}, missing ${r.missing})`);
    }
    for (const d of await compareStates(clean, tortured)) failures.push(`state: ${d}`);
    const stagingLeft = existsSync(join(tortured, '_staging')) ? walk(join(tortured, '_staging')).length : 0;
    say(`lock after the final run: ${fin.lock ? 'LEFT' : 'gone'}; _staging: ${stagingLeft} file(s) (ignored by readers)`);
    say();
    if (failures.length) {
      say(`FAIL (${failures.length} problem(s)):`);
      for (const f of failures.slice(0, 40)) say(`  - ${f}`);
      if (failures.length > 40) say(`  ... and ${failures.length - 40} more`);
    } else say(`PASS: ${kills} kills, ${stats.attempts} attempts${compactionKills ? `, then ${compactionKills} kills of its compaction` : ''}; every table of the tortured lake equals the uninterrupted run`);
    verdict = failures.length === 0;
  } catch (e) {
    if (!(e instanceof Fail)) throw e;
    say(`FAIL: ${e.message}`);
  } finally {
    await stopSimulator(sim);
    await store.server?.close();
    conn.closeSync();
    if (opts.keep || !verdict) say(`kept ${tmp} (clean/, control/, tortured/, logs/; checked/: the last lake checked, rolled forward)`);
    else rmSync(tmp, { recursive: true, force: true });
  }
  return verdict ? 0 : 1;
}

/**
 * --compare A B: the table comparison and lake invariants of two existing lakes.
 * @param {[string, string]} lakes
 */
async function compareOnly([a, b]) {
  const tmp = mkdtempSync(join(tmpdir(), 'chainlake-compare-'));
  checkedCopy = join(tmp, 'checked');
  const problems = await lakeProblems(b).finally(() => rmSync(tmp, { recursive: true, force: true }));
  for (const p of problems) say(`${b}: ${p}`);
  let ok = problems.length === 0;
  say(`${pad('table', 22)} ${lpad('A', 8)} ${lpad('B', 8)} ${lpad('extra', 6)} ${lpad('missing', 7)}  result`);
  for (const t of lakeTables(a)) {
    const r = await compareTable(a, b, t, new Map());
    say(`${pad(t, 22)} ${lpad(r.clean, 8)} ${lpad(r.tortured, 8)} ${lpad(r.extra, 6)} ${lpad(r.missing, 7)}  ${r.ok ? 'equal' : 'MISMATCH'}`);
    for (const n of r.notes) say(`    ${n}`);
    ok &&= r.ok;
  }
  for (const d of await compareStates(a, b)) {
    say(`state: ${d}`);
    ok = false;
  }
  say(ok ? 'PASS' : 'FAIL');
  conn.closeSync();
  return ok ? 0 : 1;
}

(opts.compare ? compareOnly(opts.compare) : main()).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`torture: ${err?.stack ?? err}\n`);
    cleanupChildren();
    process.exit(1);
  },
);
