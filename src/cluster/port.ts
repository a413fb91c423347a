// The shared budget as the sources' port (src/sources/shared.ts): one SharedBudget per service of
// a run, opened at the first request that knows its budget. Its windows are the service's (a
// minute's budget spent in a few seconds would still 429 in a shorter window): the ones this
// process was told, or those another process on the key was told and stored, if shorter. Until
// its own first answer a process knows only the services' documented minute; the key's stored
// window spares its first requests from going uncounted in the windows the others share. The
// port keeps the service's pause, which the client's local budget uses as its own: one pause for
// a 429 seen here, one seen by another process, and the local budget's.
import { realClock, type Clock } from '../sources/clock.js';
import { Pause } from '../sources/pause.js';
import type { SharedBudgetFactory, SharedBudgetPort, SharedTake, SharedWindow } from '../sources/shared.js';
import { SharedBudget, type WindowBudget } from './budget.js';

/**
 * The stricter of two budgets: the shorter window (a budget kept in every short window is kept in
 * the longer ones) at the lower rate.
 */
export function stricter(a: WindowBudget, b: WindowBudget | undefined): WindowBudget {
  if (!b) return a;
  const windowMs = Math.min(a.windowMs, b.windowMs);
  const rate = Math.min(a.cuPerWindow / a.windowMs, b.cuPerWindow / b.windowMs);
  return { windowMs, cuPerWindow: Math.floor(rate * windowMs) };
}

class SharedBudgetClient implements SharedBudgetPort {
  private budget: Promise<SharedBudget> | undefined;
  /** What this process last wrote as the key's budget. */
  private learnt: SharedWindow | undefined;
  readonly paused = new Pause();

  constructor(
    private readonly url: string,
    private readonly service: string,
    private readonly key: string | undefined,
    private readonly clock: Clock,
  ) {}

  async take(weight: number, w: SharedWindow, o: SharedTake = {}): Promise<void> {
    const b = await this.open(w);
    // Heavier than a whole window: the local budget lets it go alone, and so does this one.
    if (weight > b.budget.cuPerWindow) return;
    await b.take(weight, o);
    // What this process learnt holds while it runs: once it has lapsed (no change for a while),
    // it is written again, for the processes that start later.
    if (!b.stored && this.learnt) await b.learn(this.learnt.cuPerWindow, this.learnt.windowMs);
  }

  async pause(ms: number): Promise<number> {
    if (this.budget) return (await this.budget).pause(ms);
    this.paused.extend(this.clock.now() + ms);
    return this.paused.until;
  }

  async learn(w: SharedWindow): Promise<void> {
    this.learnt = w;
    await (await this.open(w)).learn(w.cuPerWindow, w.windowMs);
  }

  async counted(w: SharedWindow, weight: number): Promise<void> {
    await (await this.open(w)).counted(weight);
  }

  async close(): Promise<void> {
    const b = this.budget;
    this.budget = undefined;
    await (await b?.catch(() => undefined))?.close();
  }

  /** The budget, counting in the stricter of this process's window and the key's stored one. */
  private async open(w: SharedWindow): Promise<SharedBudget> {
    const local = { windowMs: w.windowMs, cuPerWindow: Math.floor(w.cuPerWindow) };
    if (!this.budget) {
      const opened = SharedBudget.open(this.url, { service: this.service, key: this.key, ...local, paused: this.paused, clock: this.clock });
      // A database that did not answer is tried again at the next request.
      opened.catch(() => {
        if (this.budget === opened) this.budget = undefined;
      });
      this.budget = opened;
    }
    const b = await this.budget;
    const use = stricter(local, b.stored);
    await b.setBudget(use.cuPerWindow, use.windowMs);
    return b;
  }
}

/**
 * Ports on the database at `url` (postgres://…), one per service; close() closes every one.
 * check() opens the database once, as a run starts: a run told to share its budgets that cannot
 * reach them fails then, not when a service first limits it (nor goes on saying they are shared).
 */
export function sharedBudgets(url: string, clock: Clock = realClock): { factory: SharedBudgetFactory; check(): Promise<void>; close(): Promise<void> } {
  const ports: SharedBudgetClient[] = [];
  return {
    check: async () => {
      const b = await SharedBudget.open(url, { service: 'data', cuPerWindow: 1, clock });
      await b.close();
    },
    factory: (service, key) => {
      const p = new SharedBudgetClient(url, service, key, clock);
      ports.push(p);
      return p;
    },
    close: async () => {
      await Promise.all(ports.map((p) => p.close()));
    },
  };
}
