// Fault injection: decides, per request and deterministically from a seed, whether the answer is
// replaced by one of the failures a client of the real services must survive.
import { hashKey } from './hash.js';

export const FAULT_KINDS = [
  '429', // rate-limited, with retry-after
  '429-no-retry-after', // rate-limited, no hint
  '500',
  '502',
  '503',
  'reset', // socket destroyed before any response
  'slow', // correct answer after slowMs (past a client's timeout)
  'truncated', // 200, full Content-Length announced, half the body sent, then the socket is destroyed
  'malformed', // 200 with a complete body that is not valid JSON
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultOptions {
  /** probability per request, 0..1 (ignored when `every` is set) */
  rate: number;
  kinds?: FaultKind[];
  seed?: number;
  /** delay of a 'slow' answer (default 20000) */
  slowMs?: number;
  /** fixed schedule instead of a rate: requests every-th, 2*every-th, ... get a fault */
  every?: number;
}

export class FaultInjector {
  readonly counts: Record<FaultKind, number> = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
  readonly slowMs: number;
  private readonly kinds: readonly FaultKind[];
  private readonly seed: number;
  private n = 0;

  constructor(private readonly opts: FaultOptions) {
    this.kinds = opts.kinds && opts.kinds.length > 0 ? opts.kinds : FAULT_KINDS;
    for (const k of this.kinds) if (!FAULT_KINDS.includes(k)) throw new Error(`unknown fault kind ${k}`);
    this.seed = opts.seed ?? 0;
    this.slowMs = opts.slowMs ?? 20_000;
  }

  /** The fault for the next request, if any. */
  next(): FaultKind | undefined {
    const n = ++this.n;
    const hit = this.opts.every !== undefined && this.opts.every > 0
      ? n % this.opts.every === 0
      : hashKey(this.seed, 'fault', n) / 0x1_0000_0000 < this.opts.rate;
    if (!hit) return undefined;
    const kind = this.kinds[hashKey(this.seed, 'fault-kind', n) % this.kinds.length]!;
    this.counts[kind]++;
    return kind;
  }
}
