import { defineConfig } from 'vitest/config';

// Tests in tiers, each a vitest project: `unit` (pure modules, fake time, no server or process:
// the inner loop, `npm run test:unit`), `system` (real processes and parts: PostgreSQL, S3,
// Chromium, kills, hostile services measured from outside) and `integration` (the rest: a stage
// with DuckDB, the simulator in-process, a CLI run). `npm test` runs all three.
const UNIT = [
  'test/json/**/*.test.ts',
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
  'test/cli/docs.test.ts',
  'test/pipeline/spec.test.ts',
];
const SYSTEM = [
  'test/cluster/{budget,demo-cluster,leases,pg-fixture,queue,shared-run,two-pipelines}.test.ts',
  'test/scenarios/{s3,security,security-s3,hostile}.test.ts',
  'test/state/{s3,lock}.test.ts',
  'test/warehouse/report.test.ts',
  'test/pipeline/runs.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['test/tmpdir.setup.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT } },
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'], exclude: [...UNIT, ...SYSTEM] } },
      { extends: true, test: { name: 'system', include: SYSTEM } },
    ],
  },
});
