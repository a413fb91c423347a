// The shared budget as the sources' port (src/sources/shared.ts): one SharedBudget per service of
// a run, opened at the first request that knows its budget, and opened again on another window
// when the service announces one (its windows are the ones to share: a minute's budget spent in
// a few seconds would still 429 in a shorter window).
import type { SharedBudgetFactory, SharedBudgetPort, SharedTake, SharedWindow } from '../sources/shared.js';
import { SharedBudget } from './budget.js';

class SharedBudgetClient implements SharedBudgetPort {
  private budget: Promise<SharedBudget> | undefined;
  private windowMs = 0;

  constructor(
    private readonly url: string,
    private readonly service: string,
    private readonly key: string | undefined,
  ) {}

  async take(weight: number, w: SharedWindow, o: SharedTake = {}): Promise<void> {
    const cu = Math.floor(w.cuPerWindow);
    // Heavier than a whole window: the local budget lets it go alone, and so does this one.
    if (weight > cu) return;
    await (await this.open(w)).take(weight, o);
  }

  async pause(ms: number): Promise<number> {
    return this.budget ? (await this.budget).pause(ms) : Date.now() + ms;
  }

  async learn(w: SharedWindow): Promise<void> {
    await (await this.open(w)).learn(w.cuPerWindow);
  }

  async close(): Promise<void> {
    const b = this.budget;
    this.budget = undefined;
    await (await b?.catch(() => undefined))?.close();
  }

  private open(w: SharedWindow): Promise<SharedBudget> {
    const cu = Math.floor(w.cuPerWindow);
    if (this.budget && this.windowMs === w.windowMs) return this.budget.then((b) => (b.setBudget(cu), b));
    const old = this.budget;
    this.windowMs = w.windowMs;
    const opened = (async () => {
      // What the old window's slice holds goes back before the new window's first claim.
      await (await old?.catch(() => undefined))?.close();
      return SharedBudget.open(this.url, { service: this.service, key: this.key, cuPerWindow: cu, windowMs: w.windowMs });
    })();
    // A database that did not answer is tried again at the next request.
    opened.catch(() => {
      if (this.budget === opened) this.budget = undefined;
    });
    this.budget = opened;
    return opened;
  }
}

/** Ports on the database at `url` (postgres://…), one per service; close() closes every one. */
export function sharedBudgets(url: string): { factory: SharedBudgetFactory; close(): Promise<void> } {
  const ports: SharedBudgetClient[] = [];
  return {
    factory: (service, key) => {
      const p = new SharedBudgetClient(url, service, key);
      ports.push(p);
      return p;
    },
    close: async () => {
      await Promise.all(ports.map((p) => p.close()));
    },
  };
}
