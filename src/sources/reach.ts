// What a run's clients know of the addresses they send to: when each last answered anything, and
// which answered nothing while a request used up its tries (sources/client.ts). Shared by the
// run's clients, so that services at one address (the simulator's one port; a gateway in front of
// several services) learn together that it is down, and each does not spend its own tries to
// learn the same. A run has its own: what an address did in another run says nothing of now.

export class Reachability {
  private readonly answered = new Map<string, number>();
  private readonly down = new Map<string, string>();
  private readonly waiting = new Map<string, Set<() => void>>();

  /** `origin` answered (any status) at `t`. */
  answer(origin: string, t: number): void {
    this.answered.set(origin, Math.max(t, this.answered.get(origin) ?? -Infinity));
  }

  /** When `origin` last answered anything, or -Infinity. */
  lastAnswer(origin: string): number {
    return this.answered.get(origin) ?? -Infinity;
  }

  /**
   * `origin` is down: `finding` says what it did (`refused the connection`), of the address, not of
   * the service that found it, as each service at the address says it in its own name (notSent).
   * The first finding stays, and wakes those waiting on it.
   */
  markDown(origin: string, finding: string): void {
    if (this.down.has(origin)) return;
    this.down.set(origin, finding);
    for (const wake of this.waiting.get(origin) ?? []) wake();
    this.waiting.delete(origin);
  }

  /**
   * Calls `wake` once if `origin` is found down (a request asleep before its next try, which would
   * otherwise learn it when it wakes, up to its longest backoff later); returns what stops waiting.
   */
  onDown(origin: string, wake: () => void): () => void {
    let set = this.waiting.get(origin);
    if (!set) this.waiting.set(origin, (set = new Set()));
    set.add(wake);
    return () => {
      set.delete(wake);
      if (!set.size && this.waiting.get(origin) === set) this.waiting.delete(origin);
    };
  }

  /** What was found of `origin` (a request to it is not sent), or undefined while it is not known to be down. */
  notSent(origin: string): string | undefined {
    return this.down.get(origin);
  }
}
