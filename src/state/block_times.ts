// The times a run resolved to blocks (a pipeline's startTimestamp and endTimestamp on a block-ranged
// table), kept in the lake so that a later run, and a dry run, know them without asking: one small
// JSON per chain under _state/_block_times/, written whole and atomically as a partition state is.
// The first block at or after a time never changes once the chain has it, so an entry never expires.
import { RunError } from '../errors.js';

/** The folder under _state/ that holds them: not a table's (table names never start with `_`). */
export const BLOCK_TIMES = '_block_times';

/** A folder of _state/ that holds a table's partition states, not a record of the lake's own such as this one. */
export function isTableFolder(name: string): boolean {
  return !name.startsWith('_');
}

/** A time resolved before: `block` is the first block at or after `time` (Unix seconds). */
export interface Resolved {
  time: number;
  block: number;
}

/** The text of a chain's record: its resolutions in time order, one per time. */
export function encodeBlockTimes(chain: string, resolved: readonly Resolved[]): string {
  const byTime = new Map(resolved.map((r) => [r.time, r.block]));
  const list = [...byTime].sort(([a], [b]) => a - b).map(([time, block]) => ({ time, block }));
  return JSON.stringify({ chain, resolved: list }, null, 1);
}

/**
 * A chain's resolutions from the text of its record (`file` names it in the error). A record that
 * is not one, or whose blocks go back while its times go forward, is refused: a wrong block would
 * bound a window wrongly without a word.
 */
export function decodeBlockTimes(text: string, chain: string, file: string): Resolved[] {
  const bad = (why: string) => new RunError(`${file}: not a record of block times (${why}); delete it and the next run finds them again`);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw bad('not JSON');
  }
  const o = doc as { chain?: unknown; resolved?: unknown } | null;
  if (!o || typeof o !== 'object' || o.chain !== chain || !Array.isArray(o.resolved)) throw bad(`expected {"chain": ${JSON.stringify(chain)}, "resolved": [...]}`);
  const out: Resolved[] = [];
  for (const r of o.resolved as unknown[]) {
    const { time, block } = (r ?? {}) as Record<string, unknown>;
    if (!Number.isSafeInteger(time) || !Number.isSafeInteger(block) || (block as number) < 0) throw bad(`an entry ${JSON.stringify(r)?.slice(0, 80)} is not {"time": seconds, "block": number}`);
    const prev = out[out.length - 1];
    if (prev && ((time as number) <= prev.time || (block as number) < prev.block)) throw bad(`times and blocks out of order at time ${String(time)}`);
    out.push({ time: time as number, block: block as number });
  }
  return out;
}
