#!/usr/bin/env -S MALLOC_MMAP_THRESHOLD_=131072 node --max-semi-space-size=8 --heap-growing-percent=100
// The CLI is compiled to dist/ by `npm run build` (run automatically by `npm ci` through `prepare`).
// Memory (issue 4, bounded RSS), as measured on a 5M-row run against the simulator:
// - an 8 MB young generation (V8's default is 16) keeps V8 from growing a large heap out of
//   short-lived pages: a 1M-row rebuild peaked at 255 MB instead of 289, 7% slower (2 MB: 215 MB
//   but 20-40% slower);
// - the old generation grows by a fixed factor of 2 (--heap-growing-percent=100) instead of V8's
//   own, which lets it grow up to 4x its live data in a long run: 227-230 MB instead of 258-289,
//   for 10-15% of the run's speed (replay's was unchanged);
// - glibc's malloc gets a fixed mmap threshold: its default rises up to 32 MB after a large block
//   is freed, blocks of page size then come from the heap, and freed ones stay in the RSS (the
//   native memory crept from 116 to 134-164 MB; the peak went from 305-312 MB to 279).
// They apply when the file is run as a program, as `chainlake` and the Makefile do. The loading
// commands also ask DuckDB's allocator (jemalloc) to hand freed pages back at once instead of
// keeping them for reuse: about 50 MB less per written batch, for some of DuckDB's speed, which the
// transform hides (it writes on its own threads meanwhile). A rebuild keeps them for 50 ms: it
// writes batches of 40,000 rows with one thread, whose CPU handing pages back at once doubled;
// kept that long, a rebuild of 600k rows still peaked under 300 MB, where 100 ms crossed it
// (docs/benchmarks.md, rebuild). Queries keep the default. A DUCKDB_JE_MALLOC_CONF you set wins.
const decayMs = new Map([['run', 0], ['compact', 0], ['rebuild', 50]]).get(process.argv[2]);
if (decayMs !== undefined) process.env.DUCKDB_JE_MALLOC_CONF ??= `dirty_decay_ms:${decayMs},muzzy_decay_ms:${decayMs}`;
import('../dist/bin/main.js').then((m) => m.main(process.argv.slice(2))).catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND') {
    process.stderr.write('chainlake: dist/ is missing; run `npm run build` (npm ci does it through prepare)\n');
    process.exit(2);
  }
  throw err;
});
