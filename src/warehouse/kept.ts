// What a long-lived process (the library behind a dashboard) keeps of its last queries: values that
// are pure functions of their key, so a hit is never stale, and only the newest few, so that what
// is kept stays small however many queries pass.

/** `value` kept under `key` in `map`, the oldest entry let go once `map` holds `limit`; returns `value`. */
export function remember<K, V>(map: Map<K, V>, key: K, value: V, limit: number): V {
  if (map.size >= limit) map.delete(map.keys().next().value!);
  map.set(key, value);
  return value;
}
