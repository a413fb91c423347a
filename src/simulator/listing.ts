// An ordered, random-access view of a listing. Routes page through it by position, so a page
// costs O(pageSize) however long the listing is.

export interface Listing<T> {
  readonly length: number;
  at(position: number): T;
}

export function* iterate<T>(listing: Listing<T>): IterableIterator<T> {
  for (let k = 0; k < listing.length; k++) yield listing.at(k);
}

export function fromArray<T>(items: readonly T[]): Listing<T> {
  return { length: items.length, at: (k) => items[k]! };
}

export function mapListing<A, B>(listing: Listing<A>, f: (a: A) => B): Listing<B> {
  return { length: listing.length, at: (k) => f(listing.at(k)) };
}

/** Serves indices hi-1 down to lo of an index-addressed sequence: newest first. */
export function descending<T>(lo: number, hi: number, itemAt: (i: number) => T): Listing<T> {
  const length = Math.max(0, hi - lo);
  return { length, at: (k) => itemAt(hi - 1 - k) };
}

/** Smallest i in [lo, hi] with pred(i) true, for a predicate monotone false..true. */
export function lowerBound(lo: number, hi: number, pred: (i: number) => boolean): number {
  while (lo < hi) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (pred(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
