// Bundles the command line (dist/cli/main.js, as tsc compiled it) into dist/bin/, the code
// bin/chainlake.js runs: a command's process then reads and compiles a handful of files instead of
// hundreds (chainlake's own modules, yargs, apache-arrow, the AWS SDK, pg), which was about half of
// a short command's CPU and a fifth of a demo run's. `npm run build` runs this after tsc.
//
// The library (dist/index.js, `import { openLake } from 'chainlake'`) is bundled the same way into
// dist/lib/, and dist/index.js becomes one line that re-exports it: as tsc wrote them, a program
// importing it resolved, read and compiled hundreds of files (chainlake's, apache-arrow's), which
// cost more than DuckDB's own start-up.
//
// DuckDB's JavaScript package (@duckdb/node-api, CommonJS, some 180 files) is bundled on its own
// into one CommonJS file, copied into each output folder, which src/load/duckdb.ts requires there
// (the name is given to it as DUCKDB_API): one file to resolve and compile instead of each of its.
//
// Left outside the bundles: DuckDB's native addon (@duckdb/node-bindings, loaded by require from
// its package), pino and its transports (it starts them in worker threads by module name) and pg's
// optional native binding. dist/bin/ sits as deep as dist/cli/, so that a path a module finds from
// its own place (the bundled SQL in sql/) is found from the bundle too.
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = `${ROOT}dist/bin`;
const EXTERNAL = /^@duckdb\/|^pino(-pretty|-abstract-transport|-std-serializers)?(\/|$)|^thread-stream(\/|$)|^pg-native$|\.node$/;

const DUCKDB_API = 'duckdb-api.cjs';

async function bundle(input, out) {
  rmSync(out, { recursive: true, force: true });
  await build({
    input: { [input.name]: input.file },
    platform: 'node',
    external: (id) => EXTERNAL.test(id),
    logLevel: 'warn',
    transform: { define: { DUCKDB_API: JSON.stringify(`./${DUCKDB_API}`) } },
    output: { dir: out, format: 'esm', sourcemap: true, chunkFileNames: '[name]-[hash].js' },
  });
}

await bundle({ name: 'main', file: `${ROOT}dist/cli/main.js` }, OUT);
await build({
  input: createRequire(import.meta.url).resolve('@duckdb/node-api'),
  platform: 'node',
  external: (id) => /^@duckdb\/node-bindings(\/|$)/.test(id),
  logLevel: 'warn',
  output: { file: `${OUT}/${DUCKDB_API}`, format: 'cjs' },
});
// dist/lib/ sits as deep as dist/warehouse/, as dist/bin/ does. Run again without tsc before it,
// dist/index.js is already the line: the library bundled last time stays.
const INDEX = `${ROOT}dist/index.js`;
const LINE = "// The library, bundled by scripts/bundle.mjs (dist/lib/).\nexport * from './lib/index.js';\n";
if (readFileSync(INDEX, 'utf8') !== LINE) {
  await bundle({ name: 'index', file: INDEX }, `${ROOT}dist/lib`);
  writeFileSync(INDEX, LINE);
}
// The library's bundle requires the same file beside it.
copyFileSync(`${OUT}/${DUCKDB_API}`, `${ROOT}dist/lib/${DUCKDB_API}`);
