// The fix for a mistyped name: the valid name closest to it, which a message offers first ("did you
// mean erc_transfers?"), rather than every name there is. One measure for commands, flags,
// pipeline keys and table names, so that they all forgive the same slips.

/**
 * Edits that turn `a` into `b`: a character inserted, deleted or replaced, or two neighbours swapped
 * (`tabel` is one edit from `table`, where plain Levenshtein counts two). Case is not an edit.
 */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  // Three rows of the table are enough: the swap looks two back.
  let back2: number[] = [];
  let back = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const row = [i];
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let d = Math.min(back[j]! + 1, row[j - 1]! + 1, back[j - 1]! + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) d = Math.min(d, back2[j - 2]! + 1);
      row.push(d);
    }
    back2 = back;
    back = row;
  }
  return back[t.length]!;
}

/**
 * The name of `names` closest to `given`, or undefined when none is close enough to be the one
 * meant: a third of the name's length in edits (at least one), or the name given as a part of it
 * (`transfers` is not a table, `erc_transfers` is). Ties go to the name listed first.
 */
export function closest(given: string, names: Iterable<string>): string | undefined {
  const bound = Math.max(1, Math.floor(given.length / 3));
  let best: { name: string; d: number } | undefined;
  for (const name of names) {
    const d = editDistance(given, name);
    if (d <= bound && (!best || d < best.d)) best = { name, d };
  }
  if (best || given.length < 3) return best?.name;
  const lower = given.toLowerCase();
  for (const name of names) if (name.toLowerCase().includes(lower)) return name;
  return undefined;
}

/** `; did you mean X?` with `X` as `show` writes it (`--lake`), or '' when no name is close. */
export function didYouMean(given: string, names: Iterable<string>, show: (name: string) => string = (n) => n): string {
  const c = closest(given, names);
  return c === undefined ? '' : `; did you mean ${show(c)}?`;
}
