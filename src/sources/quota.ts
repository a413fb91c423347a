// The day's quota: so many CU per UTC day, the pipeline's or the one the service announces (the
// lower wins). Pure: every method takes the time.
import { DAY_MS } from './clock.js';

export class DayQuota {
  private announced = Infinity;
  /** The UTC day of the last grant, and the CU granted in it. */
  private day = -1;
  private used = 0;

  constructor(private readonly configured = Infinity) {}

  /** CU per day in force; Infinity while none is known. */
  get limit(): number {
    return Math.min(this.configured, this.announced);
  }

  /** The service's `ratelimit-policy` names a day's quota. */
  announce(cuPerDay: number): void {
    this.announced = cuPerDay;
  }

  /** The earliest time from `t` on that a request of this weight fits the day's quota. */
  earliest(weight: number, t: number): number {
    const limit = this.limit;
    if (limit === Infinity) return t;
    const d = Math.floor(t / DAY_MS);
    const used = d === this.day ? this.used : 0;
    // Once anything went out today: a request heavier than the whole day goes alone rather than never.
    return used > 0 && used + weight > limit ? (d + 1) * DAY_MS : t;
  }

  grant(weight: number, now: number): void {
    const d = Math.floor(now / DAY_MS);
    if (d !== this.day) {
      this.day = d;
      this.used = 0;
    }
    this.used += weight;
  }
}
