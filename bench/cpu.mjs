#!/usr/bin/env node
// CPU-bound benchmark (issue 4): erc_transfers rows/s when the service is not the limit, and peak
// RSS at two sizes. Prints figures; asserts nothing.
//   1. end to end: `chainlake run` against the simulator (its own process, limits off);
//   2. replay: `chainlake rebuild erc_transfers --no-warehouse` from the raw pages that run kept
//      (transform+load), then `chainlake warehouse` (the copy of its rows a rebuild makes by default),
//      then `chainlake compact erc_transfers` of the files it wrote;
//   3. the ceiling: JSON.parse of the same raw pages, in this process; and what each stage does
//      alone on a sample of them: the transform to staged lines, and DuckDB writing those lines
//      as zstd Parquet with one thread (its floor on one core) and with two.
//      And a floor under any rebuild: DuckDB alone from the decompressed pages to the same Parquet,
//      with none of the run's checks (bench/rebuild-floor.mjs).
//   4. the same run into a lake on object storage (s3://, s3rver on loopback in its own process,
//      bench/s3rver.mjs) beside the local lake: rows/s against the local run's, and peak RSS
//      (--no-s3 leaves it out).
// The CLI runs as users run it (bin/chainlake.js as a program, so with its shebang's V8 flags).
//   5. one contract's 1M rows fetched as 16 block ranges at once (chunks; `concurrency: 16` lets
//      16 requests be under way): rows/s and peak RSS of that run.
// Usage: node bench/cpu.mjs [--rows 1000000,5000000] [--contracts 12] [--chunk-rows 1000000] [--no-s3]
//        node bench/cpu.mjs --replay <a lake kept by --keep> [--no-floor]   (its rebuild alone, beside the ceiling and the floor)
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { brotliDecompressSync } from 'node:zlib';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { arg, buildWorld, fmt, plan, root, startSim, timed, transfersPipeline } from './common.mjs';
import { rebuildFloor } from './rebuild-floor.mjs';

const sizes = arg('rows', '1000000,5000000').split(',').map(Number);

/** s3rver in its own process, and the environment a CLI needs to use it (set on this process: the timed CLIs inherit it). */
function startS3() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'bench', 's3rver.mjs'), 'bench'], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (d) => {
      const m = /s3rver at (http:\/\/127\.0\.0\.1:\d+)/.exec(String(d));
      if (!m) return;
      const cache = mkdtempSync(join(tmpdir(), 'chainlake-bench-cache-'));
      Object.assign(process.env, {
        AWS_ACCESS_KEY_ID: 'S3RVER',
        AWS_SECRET_ACCESS_KEY: 'bench',
        AWS_REGION: 'us-east-1',
        AWS_ENDPOINT_URL_S3: m[1],
        CHAINLAKE_S3_PATH_STYLE: '1',
        CHAINLAKE_CACHE: cache,
        AWS_EC2_METADATA_DISABLED: 'true',
      });
      resolve({
        url: m[1],
        stop: () => {
          child.kill('SIGTERM');
          rmSync(cache, { recursive: true, force: true });
        },
      });
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`s3rver exited ${code}`)));
  });
}

/** `encoding` utf8: the page as text, as a client reads it; latin1: its UTF-8 bytes one char each, as replay parses it. */
function jsonParseRate(lake, encoding = 'utf8', o = {}) {
  const dir = join(lake, '_raw', 'erc_transfers');
  let rows = 0;
  let parseMs = 0;
  let cpuMicros = 0;
  for (const f of readdirSync(dir)) {
    // Decompress outside the clock: the ceiling is V8's JSON.parse of the same page texts.
    const text = brotliDecompressSync(readFileSync(join(dir, f))).toString(encoding);
    const lines = text.split('\n');
    const c = process.cpuUsage();
    const t = performance.now();
    for (const l of lines) if (l) rows += JSON.parse(l).transfers.length;
    parseMs += performance.now() - t;
    const used = process.cpuUsage(c);
    cpuMicros += used.user + used.system;
  }
  // Its CPU too, when asked: a loaded machine stretches the wall time far more than the CPU.
  if (o.cpu) o.cpu.seconds = cpuMicros / 1e6;
  return rows / (parseMs / 1000);
}

/** Each stage alone on about `sample` rows of the raw pages: transform, and DuckDB's write. */
async function stageRates(lake, sample = 200_000) {
  const { STREAM_BY_TABLE } = await import(join(root, 'dist', 'streams', 'index.js'));
  const { Transformer } = await import(join(root, 'dist', 'transform', 'rows.js'));
  const { ParquetWriter, duck } = await import(join(root, 'dist', 'load', 'parquet.js'));
  const decl = STREAM_BY_TABLE.get('erc_transfers');
  const dir = join(lake, '_raw', 'erc_transfers');
  const partition = { id: 'bench', path: {}, query: {}, values: { chainId: '43114' } };
  // The staged lines of `sample` rows, page by page (no heap of parsed pages: the pipeline never
  // holds one either); the first 200 pages are kept parsed for the transform's own clock.
  const few = [];
  const lines = [];
  const all = new Transformer(decl, partition);
  for (const f of readdirSync(dir)) {
    for (const l of brotliDecompressSync(readFileSync(join(dir, f))).toString('utf8').split('\n')) {
      if (!l || lines.length >= sample) continue;
      const items = JSON.parse(l).transfers;
      if (few.length < 200) few.push(items);
      all.push(items);
      for (const x of all.takeLines()) lines.push(x);
    }
    if (lines.length >= sample) break;
  }
  const rows = lines.length;
  // The same 200 pages transformed over and over, after a first round that compiles and warms up.
  const fewRows = few.reduce((n, p) => n + p.length, 0);
  let t0 = 0;
  let done = 0;
  for (let round = 0; done < rows; round++) {
    if (round === 1) t0 = performance.now();
    const tr = new Transformer(decl, partition);
    for (const items of few) {
      tr.push(items);
      tr.takeLines();
    }
    if (round > 0) done += fewRows;
  }
  const transform = done / ((performance.now() - t0) / 1000);
  const work = mkdtempSync(join(tmpdir(), 'chainlake-bench-stage-'));
  try {
    const writer = await ParquetWriter.open(join(work, 'spill'));
    const db = await (await duck()).connect();
    const write = {};
    for (const threads of [1, 2]) {
      await db.run(`SET threads = ${threads}`);
      for (let i = 0; i < rows; i += 10_000) {
        // The run's batches are 10,000 rows; a batch file per write, as the pipeline does.
        const batch = join(work, `b${i}`);
        writeFileSync(batch, lines.slice(i, i + 10_000).join('\n') + '\n');
      }
      const t1 = performance.now();
      for (let i = 0; i < rows; i += 10_000) await writer.write(decl, join(work, `b${i}`), Math.min(10_000, rows - i), join(work, `out${threads}`), 'bench');
      write[threads] = rows / ((performance.now() - t1) / 1000);
    }
    await db.run('RESET threads');
    db.closeSync();
    writer.close();
    return { transform, write };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const results = [];
if (arg('stages')) {
  // Development aid: the stage rates on a lake a bench run kept (--keep).
  console.log({ parse: jsonParseRate(arg('stages')), ...(await stageRates(arg('stages'))) });
  process.exit(0);
}
if (arg('replay')) {
  // Development aid: the replay of a kept lake (on a copy: a rebuild replaces its files), with the
  // ceiling measured right after it, so that a loaded machine moves both alike.
  const copy = join(mkdtempSync(join(tmpdir(), 'chainlake-bench-replay-')), 'lake');
  cpSync(arg('replay'), copy, { recursive: true });
  try {
    // The machine's load before and after: on a shared machine it moves the wall time most.
    const load = () => loadavg()[0].toFixed(0);
    const loadBefore = load();
    // The rebuild alone, then the warehouse file's copy of its rows that `rebuild` makes after it
    // by default: two figures, so that the transform and load are compared with what they were.
    const replay = await timed(['rebuild', 'erc_transfers', '--lake', copy, '--no-warehouse']);
    const copied = await timed(['warehouse', '--lake', copy]);
    const rows = Number(/: (\d+) rows \(/.exec(replay.stdout)?.[1]);
    const cpu = {};
    const parse = jsonParseRate(copy, 'utf8', { cpu });
    console.log(`replay ${fmt(rows / replay.seconds)} rows/s (${(rows / replay.seconds / parse).toFixed(2)} of the ceiling ${fmt(parse)}), ${replay.seconds.toFixed(1)} s, user + sys CPU ${replay.cpuSeconds.toFixed(1)} s, peak RSS ${fmt(replay.rssMB)} MB, load average ${loadBefore}-${load()}`);
    console.log(`  then the warehouse file with its rows (as \`rebuild\` writes it by default) ${copied.seconds.toFixed(1)} s, user + sys CPU ${copied.cpuSeconds.toFixed(1)} s, peak RSS ${fmt(copied.rssMB)} MB: both ${fmt(rows / (replay.seconds + copied.seconds))} rows/s (${(rows / (replay.seconds + copied.seconds) / parse).toFixed(2)} of the ceiling)`);
    // What the wall-time ratio would be with both cores its own: the ceiling is one thread's parse.
    console.log(`  by CPU: the ceiling's parse ${cpu.seconds.toFixed(1)} s, the rebuild ${(replay.cpuSeconds / cpu.seconds).toFixed(1)} times it: ${((cpus().length * cpu.seconds) / replay.cpuSeconds).toFixed(2)} of the ceiling on ${cpus().length} cores`);
    if (!process.argv.includes('--no-floor')) for (const line of await rebuildFloor(arg('replay'))) console.log(`  floor: ${line.trim()}`);
  } finally {
    rmSync(dirname(copy), { recursive: true, force: true });
  }
  process.exit(0);
}
const s3 = process.argv.includes('--no-s3') ? undefined : await startS3();
// Stopped at the end, or by a failure's exit: its pipe would otherwise keep this process alive.
process.on('exit', () => s3?.stop());
for (const rows of sizes) {
  const p = plan(rows);
  const sim = await startSim(p.scale);
  const dir = mkdtempSync(join(tmpdir(), 'chainlake-bench-'));
  const lake = join(dir, 'lake');
  const pipeline = join(dir, 'bench.yaml');
  writeFileSync(pipeline, transfersPipeline(sim.url, p.contracts));
  try {
    const run = await timed(['run', pipeline, '--lake', lake, '--log-level', 'warn']);
    const replay = await timed(['rebuild', 'erc_transfers', '--lake', lake, '--no-warehouse']);
    replay.warehouse = await timed(['warehouse', '--lake', lake]);
    const compact = await timed(['compact', 'erc_transfers', '--lake', lake]);
    compact.files = /(\d+) data files -> (\d+)/.exec(compact.stdout)?.slice(1, 3).join(' -> ');
    const parse = jsonParseRate(lake);
    const parseBytes = jsonParseRate(lake, 'latin1');
    const stages = results.length === 0 ? await stageRates(lake) : undefined;
    const floor = results.length === 0 ? await rebuildFloor(lake) : undefined;
    const runS3 = s3 ? await timed(['run', pipeline, '--lake', `s3://bench/lake-${p.total}`, '--log-level', 'warn']) : undefined;
    results.push({ rows: p.total, contracts: p.contracts.length, run, runS3, replay, compact, parse, parseBytes, stages, floor });
  } finally {
    sim.stop();
    if (!process.argv.includes('--keep')) rmSync(dir, { recursive: true, force: true });
  }
}

/** One contract of about `rows` transfers, its window fetched as 16 chunks at once. */
async function oneContract(rows) {
  const world = buildWorld({ seed: 1, scale: 1 });
  const [contract] = world
    .contractsOf('43114')
    .map((c) => ({ chainId: '43114', address: c.address }))
    .sort((a, b) => world.transferCountFor('43114', b.address) - world.transferCountFor('43114', a.address));
  const scale = Math.max(1, Math.ceil(rows / world.transferCountFor('43114', contract.address)));
  const total = buildWorld({ seed: 1, scale }).transferCountFor('43114', contract.address);
  const sim = await startSim(scale);
  const dir = mkdtempSync(join(tmpdir(), 'chainlake-bench-'));
  const pipeline = join(dir, 'bench.yaml');
  writeFileSync(pipeline, transfersPipeline(sim.url, [contract], { concurrency: 16, chunks: 16 }));
  try {
    const run = await timed(['run', pipeline, '--lake', join(dir, 'lake')]);
    const chunks = /erc_transfers: (\d+) block ranges, (\d+) split off/.exec(run.stdout);
    return { rows: total, run, chunks: chunks ? Number(chunks[1]) : 1 };
  } finally {
    sim.stop();
    if (!process.argv.includes('--keep')) rmSync(dir, { recursive: true, force: true });
  }
}
const chunked = await oneContract(Number(arg('chunk-rows', '1000000')));

console.log(`\nCPU-bound (${cpus()[0]?.model ?? 'cpu'} x${cpus().length}, ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version})`);
for (const r of results) {
  console.log(`  ${fmt(r.rows)} erc_transfers rows from ${r.contracts} contracts`);
  console.log(`    JSON.parse of the same pages (ceiling)   ${fmt(r.parse)} rows/s as text, ${fmt(r.parseBytes)} as UTF-8 bytes (replay's way)`);
  if (r.stages) {
    console.log(`    stages alone, on ${fmt(200_000)} of those rows:`);
    console.log(`      transform (objects -> staged lines)    ${fmt(r.stages.transform)} rows/s`);
    console.log(`      DuckDB write (lines -> zstd Parquet)   ${fmt(r.stages.write[1])} rows/s on 1 thread, ${fmt(r.stages.write[2])} on 2`);
  }
  console.log(`    replay: transform + load (rebuild)      ${fmt(r.rows / r.replay.seconds)} rows/s  (${(r.rows / r.replay.seconds / r.parse).toFixed(2)} of the ceiling), peak RSS ${fmt(r.replay.rssMB)} MB`);
  console.log(`      its user + sys CPU                    ${r.replay.cpuSeconds.toFixed(1)} s, ${(r.replay.cpuSeconds / (r.rows / r.parse)).toFixed(1)} times the ceiling's parse`);
  console.log(`      then the warehouse file's rows         ${r.replay.warehouse.seconds.toFixed(1)} s (what \`rebuild\` adds by default), peak RSS ${fmt(r.replay.warehouse.rssMB)} MB`);
  if (r.floor) {
    console.log('    a floor under any rebuild (bench/rebuild-floor.mjs): DuckDB alone from the pages, no JavaScript, no checks');
    for (const line of r.floor) console.log(`    ${line}`);
  }
  console.log(`    end to end on the simulator (run)       ${fmt(r.rows / r.run.seconds)} rows/s  (${(r.rows / r.run.seconds / r.parse).toFixed(2)} of the ceiling), peak RSS ${fmt(r.run.rssMB)} MB`);
  if (r.runS3)
    console.log(`    end to end into s3:// (s3rver, loopback)  ${fmt(r.rows / r.runS3.seconds)} rows/s  (${(r.run.seconds / r.runS3.seconds).toFixed(2)} of the local run), peak RSS ${fmt(r.runS3.rssMB)} MB`);
  console.log(`    compact (files of 40,000 rows -> 1M)    ${r.compact.files} files in ${r.compact.seconds.toFixed(1)} s, peak RSS ${fmt(r.compact.rssMB)} MB`);
}
if (results.length >= 2) {
  const [a, b] = results;
  console.log(`  peak RSS ratio ${fmt(b.rows)} / ${fmt(a.rows)} rows: run ${(b.run.rssMB / a.run.rssMB).toFixed(2)}, replay ${(b.replay.rssMB / a.replay.rssMB).toFixed(2)} (flat: within 1.10)`);
}
console.log(`  ${fmt(chunked.rows)} erc_transfers rows of one contract, 16 block ranges at once (${chunked.chunks} in all)`);
console.log(`    end to end on the simulator (run)       ${fmt(chunked.rows / chunked.run.seconds)} rows/s, peak RSS ${fmt(chunked.run.rssMB)} MB`);
s3?.stop();
