import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Tests in tiers, each a vitest project: `unit` (pure modules, fake time, no server or process:
// the inner loop, `npm run test:unit`), `system` and `timed` (real processes and parts: PostgreSQL,
// S3, Chromium, kills, hostile services measured from outside) and `integration` (the rest: a
// stage with DuckDB, the simulator in-process, a CLI run). `npm test` runs them all.
const UNIT = [
  'test/json/**/*.test.ts',
  'test/simulator/keccak.test.ts',
  'test/iceberg/{avro,bounds,metadata}.test.ts',
  'test/extract/**/*.test.ts',
  'test/transform/**/*.test.ts',
  'test/load/**/*.test.ts',
  'test/text/**/*.test.ts',
  'test/layers.test.ts',
  'test/sources/budget.test.ts',
  'test/sources/{ledger,pacer,estimator}.test.ts',
  'test/state/cursor.test.ts',
  'test/state/names.test.ts',
  'test/pipeline/window.test.ts',
  'test/pipeline/series.test.ts',
  'test/state/lease.test.ts',
  'test/cluster/url.test.ts',
  'test/cluster/offset.test.ts',
  'test/cli/docs.test.ts',
  'test/pipeline/spec.test.ts',
  'test/pipeline/strategies.test.ts',
  'test/pipeline/settle.test.ts',
  'test/pipeline/{worker,session,batch}.test.ts',
];
/**
 * Real processes that share a machine well: each runs its own servers and processes on loopback,
 * and what it asserts holds however slow they are (the queue's killed workers: the tables equal).
 */
const SYSTEM = [
  'test/cluster/{budget-db,demo-cluster,leases,queue}.test.ts',
  'test/scenarios/{s3,security,security-s3,hostile}.test.ts',
  'test/state/s3.test.ts',
  'test/iceberg/s3.test.ts',
  'test/warehouse/report.test.ts',
  'test/pipeline/runs.test.ts',
  'test/state/lock.test.ts',
];
/**
 * Whole runs against a rate-limited service that measure the windows they shared: the processes
 * wait on their budget most of the time (a fraction of a core between them), so the two files run
 * side by side near the end of the first group, each with its own service and database.
 */
const PACED = ['test/cluster/{shared-run,two-pipelines}.test.ts'];
/**
 * Real processes that measure time to within a window: rate windows of a second spent by several
 * processes. They run one file at a time, last, so that what they measure is theirs and not the
 * load of other tests. (The lake's lock between processes, test/state/lock.test.ts, asserts no
 * timing, only what eventually happens: it is a system file.)
 */
const TIMED = ['test/cluster/budget.test.ts'];

/**
 * The files that take longest, longest first: on a fresh clone vitest knows no durations and
 * would start them in an arbitrary order, and one long file started last is a tail where one core
 * works alone. The list is a hint of order only (a file missing from it runs after those in it).
 */
const LONGEST = [
  'test/cluster/queue.test.ts',
  'test/warehouse/rows.test.ts',
  'test/scenarios/s3.test.ts',
  'test/pipeline/compact.test.ts',
  'test/warehouse/warehouse.test.ts',
  'test/iceberg/read.test.ts',
  'test/pipeline/rebuild.test.ts',
  'test/scenarios/security.test.ts',
  'test/scenarios/security-s3.test.ts',
  'test/scenarios/faults.test.ts',
  'test/cli/query.test.ts',
  'test/warehouse/check.test.ts',
  'test/scenarios/hostile.test.ts',
  'test/cluster/demo-cluster.test.ts',
];
/** Then the other real processes, the rest of the integration tier, the paced pair, and the unit tier last (short files fill the cores at the end). */
const PROJECTS = ['system', 'integration', 'paced', 'unit'];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const rank = (f: TestSpecification) => {
      const i = LONGEST.indexOf(relative(root, f.moduleId));
      return i >= 0 ? i : LONGEST.length + PROJECTS.indexOf(f.project.name);
    };
    return [...files].sort((a, b) => a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder || rank(a) - rank(b) || a.moduleId.localeCompare(b.moduleId));
  }
}

// `unit`, `integration` and `system` files share a worker's modules from one file to the next
// (isolate: false; each file restores what it changes: fake timers, environment, and stops what it
// started), so src and DuckDB are imported once per worker, not once per file. The paced and
// timed files keep a fresh worker each: they measure windows, and what a previous file left
// running (a pool, a timer) would be in their measure.
// Vitest gives a 2-core machine one worker; most tests wait on processes, servers and the disk,
// so more files at once than cores keeps both cores busy. Projects of one group run together (in
// the order above) and groups run one after another; a group's projects share one worker count.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['test/tmpdir.setup.ts'],
    sequence: { sequencer: LongestFirst },
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT, maxWorkers: 3, isolate: false, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: [...UNIT, ...SYSTEM, ...PACED, ...TIMED], maxWorkers: 3, isolate: false, sequence: { groupOrder: 0 } } },
      // A minute is too little for a test of a few processes on a busy machine; the tier's tests
      // wait on events, so this bound only says when to give up on one that never ends.
      { extends: true, test: { name: 'system', include: SYSTEM, maxWorkers: 3, isolate: false, testTimeout: 300_000, hookTimeout: 300_000, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'paced', include: PACED, maxWorkers: 3, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'timed', include: TIMED, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
