// The decisions of a queued run and its workers (src/pipeline/settle.ts) on numbers: the time is an
// argument, so a run's minutes of polling, a database away and a silent run take no time.
import { describe, expect, it } from 'vitest';
import { jobStart, jobStopped, NO_WORKER_MS, PATIENCE_BOUNDS, RunWatch, verdict, type JobView } from '../../src/pipeline/settle.js';

const BOUND = 30_000;
const job = (o: Partial<JobView> = {}): JobView => ({ state: 'active', output: null, retryCount: 0, lost: false, ...o });

describe("a job's verdict", () => {
  it('a completed job with a report is done; one without (its worker abandoned it: the run had ended) fails its partitions', () => {
    expect(verdict(job({ state: 'completed', output: { report: { table: 't' } } }), BOUND)).toEqual({ kind: 'done' });
    expect(verdict(job({ state: 'completed', output: { abandoned: true } }), BOUND)).toEqual({ kind: 'failed', why: 'abandoned by its worker: the run had ended' });
  });

  it('a failed or cancelled job fails with its message, else its state', () => {
    expect(verdict(job({ state: 'failed', output: { message: 'given back: the worker was stopped' } }), BOUND)).toEqual({ kind: 'failed', why: 'given back: the worker was stopped' });
    expect(verdict(job({ state: 'cancelled' }), BOUND)).toEqual({ kind: 'failed', why: 'cancelled' });
  });

  it('a lost job goes back to the queue, saying how often and after how long; one waiting or under way stays open', () => {
    expect(verdict(job({ lost: true, retryCount: 1 }), BOUND)).toEqual({ kind: 'lost', attempt: 2, why: 'its worker was lost 2 times (no lease renewed for 30 s)' });
    // A worker whose session ended (killed) is lost at once, and said so: not after the bound.
    expect(verdict(job({ lost: true, gone: true }), BOUND)).toEqual({ kind: 'lost', attempt: 1, why: "its worker was lost 1 times (its session with the queue's database ended)" });
    expect(verdict(job(), BOUND)).toEqual({ kind: 'open' });
    expect(verdict(job({ state: 'created' }), BOUND)).toEqual({ kind: 'open' });
    // A job that ended is settled, whatever its lease says.
    expect(verdict(job({ state: 'completed', lost: true, output: { report: {} } }), BOUND)).toEqual({ kind: 'done' });
  });
});

describe("the run's watch", () => {
  it('says once that no worker came, when no job was taken for NO_WORKER_MS after they were queued', () => {
    const t0 = 1_000_000;
    const w = new RunWatch(BOUND, t0);
    w.queued(t0 + 500);
    const waiting = [job({ state: 'created' })];
    expect(w.polled(waiting, t0 + 500 + NO_WORKER_MS).noWorker).toBe(false);
    expect(w.polled(waiting, t0 + 501 + NO_WORKER_MS).noWorker).toBe(true);
    expect(w.polled(waiting, t0 + 10 * NO_WORKER_MS).noWorker).toBe(false);
  });

  it('says nothing once a worker took a job, however long the rest wait', () => {
    const w = new RunWatch(BOUND, 0);
    expect(w.polled([job({ state: 'created' }), job({ state: 'active' })], 1000).noWorker).toBe(false);
    expect(w.polled([job({ state: 'created' })], 10 * NO_WORKER_MS).noWorker).toBe(false);
  });

  it('gives up on a database away for longer than PATIENCE_BOUNDS bounds since it was last heard (a poll or a renewal)', () => {
    const w = new RunWatch(BOUND, 0);
    w.polled([job()], 5000);
    w.heard(9000);
    // A renewal answered late does not move the last time heard back.
    w.heard(7000);
    expect(w.away(9000 + PATIENCE_BOUNDS * BOUND)).toEqual({ awayMs: PATIENCE_BOUNDS * BOUND, giveUp: false });
    expect(w.away(9001 + PATIENCE_BOUNDS * BOUND)).toEqual({ awayMs: PATIENCE_BOUNDS * BOUND + 1, giveUp: true });
  });
});

describe("a worker's decisions", () => {
  it('works a job of a live run, abandons one of an ended run, and waits for a silent one a third of a bound at a time, up to three bounds', () => {
    expect(jobStart('live', 0, BOUND, false)).toEqual({ kind: 'work' });
    expect(jobStart('ended', 0, BOUND, false)).toEqual({ kind: 'abandon' });
    let waited = 0;
    let steps = 0;
    for (let s = jobStart('silent', waited, BOUND, false); s.kind === 'wait'; s = jobStart('silent', waited, BOUND, false)) {
      expect(s.ms).toBe(BOUND / 3);
      waited += s.ms;
      steps++;
    }
    expect(steps).toBe(9);
    expect(jobStart('silent', waited, BOUND, false)).toEqual({ kind: 'give back' });
    // Heard again while waited for: worked.
    expect(jobStart('live', 2 * BOUND, BOUND, false)).toEqual({ kind: 'work' });
  });

  it('a worker that is stopping gives the job of a silent run back at once', () => {
    expect(jobStart('silent', 0, BOUND, true)).toEqual({ kind: 'give back' });
  });

  it('a job stopped by a lost lease tells the queue nothing; one stopped otherwise goes back saying why', () => {
    expect(jobStopped(true, 'the lease of t/p was taken over')).toEqual({ kind: 'lost' });
    expect(jobStopped(false, 'the worker was stopped')).toEqual({ kind: 'give back', message: 'given back: the worker was stopped' });
  });
});
