// Every form of a secret a careless writer could produce (raw, base64 at each alignment, URL and
// JSON escapes, hex, UTF-16, another letter case), and a search for them in bytes: the sentinel
// tests (test/scenarios/security*.test.ts) search everything chainlake printed or wrote.

function base64Forms(key: string): string[] {
  // A key inside a longer base64 text is encoded at one of three alignments; the characters that
  // depend only on the key are the same wherever it sits.
  const out: string[] = [];
  for (let pad = 0; pad < 3; pad++) {
    const enc = Buffer.from('\0'.repeat(pad) + key).toString('base64');
    // Skip the group holding the leading bytes; keep whole groups of key bytes only.
    const core = enc.slice(pad ? 4 : 0, Math.floor((pad + key.length) / 3) * 4);
    out.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return [...new Set(out.filter((s) => s.length >= 16))];
}

function forms(key: string): Array<[string, Buffer]> {
  const f: Array<[string, string | Buffer]> = [
    ['raw', key],
    ['base64', Buffer.from(key).toString('base64').replace(/=+$/, '')],
    ['base64url', Buffer.from(key).toString('base64url')],
    ...base64Forms(key).map((s, i): [string, string] => [`base64 (aligned ${i})`, s]),
    ['encodeURIComponent', encodeURIComponent(key)],
    ['encodeURIComponent (lowercase hex)', encodeURIComponent(key).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())],
    ['form-urlencoded', new URLSearchParams({ k: key }).toString().slice(2)],
    ['JSON-escaped', JSON.stringify(key).slice(1, -1)],
    ['hex', Buffer.from(key).toString('hex')],
    ['utf16le', Buffer.from(key, 'utf16le')],
  ];
  const seen = new Set<string>();
  const out: Array<[string, Buffer]> = [];
  for (const [name, v] of f) {
    const b = Buffer.isBuffer(v) ? v : Buffer.from(v);
    if (seen.has(b.toString('hex'))) continue;
    seen.add(b.toString('hex'));
    out.push([name, b]);
  }
  return out;
}

/** A search for `keys` in every form: where one occurs in a byte string; empty when nowhere. */
export function leakFinder(keys: string[]): (where: string, bytes: Buffer) => string[] {
  const FORMS = keys.flatMap((k) => forms(k).map(([name, bytes]) => ({ key: k, name, bytes })));
  // Case-insensitive too: a key upper-cased in a header dump still leaks.
  const LOWER_FORMS = keys.map((k) => Buffer.from(k.toLowerCase()));
  return (where, bytes) => {
    const found: string[] = [];
    for (const f of FORMS) {
      const at = bytes.indexOf(f.bytes);
      if (at >= 0) found.push(`${where}: ${f.name} of ${f.key} at byte ${at}: ...${bytes.subarray(Math.max(0, at - 120), at + f.bytes.length + 40).toString('latin1')}...`);
    }
    const lower = Buffer.from(bytes.toString('latin1').toLowerCase(), 'latin1');
    for (const [i, l] of LOWER_FORMS.entries()) {
      const at = lower.indexOf(l);
      if (at >= 0 && !found.some((x) => x.includes(`raw of ${keys[i]}`))) found.push(`${where}: ${keys[i]} in another letter case at byte ${at}`);
    }
    return found;
  };
}
