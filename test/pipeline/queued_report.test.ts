// A queued run's report is the sum of its workers' reports (queued.ts addReport): what a worker
// counted reaches the run's report whole, so the run ends as one process would (exit 4 when a
// service refused a partition for good).
import { describe, expect, it } from 'vitest';
import { addReport } from '../../src/pipeline/queued.js';
import { newStreamReport, runOutcome, type RunReport } from '../../src/pipeline/report.js';
import { EXIT } from '../../src/errors.js';

describe("a worker's report added to the run's", () => {
  it('carries a count the run has not begun (refused), sums the others, and the run exits as refused', () => {
    const into = newStreamReport('erc_transfers');
    expect(into.refused).toBeUndefined();
    const a = { ...newStreamReport('erc_transfers'), rows: 5, errors: ['p1: 404'], refused: 1 };
    const b = { ...newStreamReport('erc_transfers'), rows: 7, errors: ['p2: 404', 'p3: 503'], refused: 1 };
    addReport(into, a);
    addReport(into, b);
    expect(into.rows).toBe(12);
    expect(into.errors).toEqual(['p1: 404', 'p2: 404', 'p3: 503']);
    expect(into.refused).toBe(2);
    const run = { status: 'failed', streams: [into] } as unknown as RunReport;
    expect(runOutcome(run).code).toBe(EXIT.refused);
  });
});
