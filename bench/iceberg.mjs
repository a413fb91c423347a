// What keeping each table an Iceberg table costs a commit (docs/iceberg.md): the publish step
// alone (stats from the Parquet footer, a manifest, a manifest list, the metadata file and the
// hint), for a table with a growing history of appends, then one commit that replaces every file
// (as a compaction does). Measured on a lake folder with a real erc_transfers file, copied under
// a new name per commit; nothing else runs.
//
// Usage: node bench/iceberg.mjs [--commits 1000]
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { arg, fmt } from './common.mjs';
import { startSimulator } from '../dist/simulator/server.js';
import { loadPipeline } from '../dist/config/pipeline.js';
import { runPipeline } from '../dist/pipeline/run.js';
import { StateStore } from '../dist/state/store.js';
import { icebergPublisher } from '../dist/iceberg/table.js';

const commits = Number(arg('commits', '1000'));
const work = mkdtempSync(join(tmpdir(), 'cl-bench-iceberg-'));
try {
  // One real data file of erc_transfers, as a run writes it.
  const sim = await startSimulator({ port: 0, seed: 1 });
  const p = loadPipeline('pipelines/demo.yaml');
  for (const s of Object.values(p.sources)) s.url = sim.url;
  p.streams = p.streams.filter((s) => s.table === 'erc_transfers');
  const source = join(work, 'source');
  await runPipeline(p, { lake: source, logger: pino({ level: 'silent' }), flushRows: 100_000 });
  await sim.close();
  const dir = join(source, 'erc_transfers', 'chain=43114');
  const file = join(dir, readdirSync(dir).find((f) => f.endsWith('.parquet')));
  const rows = new StateStore(source).all().filter((s) => s.table === 'erc_transfers').reduce((n, s) => n + s.rows, 0);

  const lake = join(work, 'lake');
  const folder = join(lake, 'erc_transfers', 'chain=43114');
  mkdirSync(folder, { recursive: true });
  const store = new StateStore(lake);
  const publisher = icebergPublisher(store);
  const times = [];
  const added = [];
  for (let i = 0; i < commits; i++) {
    const rel = `erc_transfers/chain=43114/b-n${i}-bench.parquet`;
    copyFileSync(file, join(lake, rel));
    const t0 = performance.now();
    await publisher.publish({ table: 'erc_transfers', values: { chainId: '43114' }, added: [rel], removed: [], commit: `b${i}` });
    times.push(performance.now() - t0);
    added.push(rel);
  }
  const at = (from, to) => {
    const xs = times.slice(from, to).sort((a, b) => a - b);
    return `${xs[Math.floor(xs.length / 2)].toFixed(1)} ms median, ${xs[xs.length - 1].toFixed(1)} max`;
  };
  const size = (d) => readdirSync(d).reduce((n, f) => n + statSync(join(d, f)).size, 0);
  console.log(`a data file of ${fmt(rows)} rows (${fmt(statSync(file).size)} bytes), ${fmt(commits)} appends, each one snapshot:`);
  for (const [a, b] of [[0, 10], [90, 110], [Math.floor(commits / 2) - 10, Math.floor(commits / 2) + 10], [commits - 20, commits]]) if (b <= commits) console.log(`  commits ${a + 1}-${b}: ${at(a, b)} per publish`);
  console.log(`  metadata folder after them: ${readdirSync(join(lake, 'erc_transfers', 'metadata')).length} files, ${fmt(size(join(lake, 'erc_transfers', 'metadata')))} bytes`);
  const t0 = performance.now();
  copyFileSync(file, join(lake, 'erc_transfers/chain=43114/all-compact-bench.parquet'));
  await publisher.publish({ table: 'erc_transfers', values: { chainId: '43114' }, added: ['erc_transfers/chain=43114/all-compact-bench.parquet'], removed: added, rewrite: true, commit: 'compact' });
  console.log(`  one commit replacing all ${fmt(commits)} files by one: ${(performance.now() - t0).toFixed(0)} ms; metadata folder then ${readdirSync(join(lake, 'erc_transfers', 'metadata')).length} files, ${fmt(size(join(lake, 'erc_transfers', 'metadata')))} bytes`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
