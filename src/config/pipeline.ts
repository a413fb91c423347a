// Reads a pipeline YAML and checks it against the stream declarations, naming the place of every
// problem (`file: streams[2].contracts[0]: ...`), before anything is fetched or written.
import { readFileSync } from 'node:fs';
import { LineCounter, parseDocument } from 'yaml';
import { STREAM_BY_TABLE, STREAMS } from '../streams/index.js';
import { UNIX_SECONDS, type OptionSpec, type StreamConfig, type StreamDecl } from '../decl/stream.js';
import { ASSET_NAMESPACES, type AssetNamespace } from '../decl/request.js';
import { METRICS } from '../streams/chain_metrics.js';
import { UsageError } from '../errors.js';
import { isoTime } from '../text.js';
import { closest, didYouMean } from '../closest.js';
import { evmBlockProblem, isBlockchainId, isEvmAddress, isEvmChainId, NETWORKS, nodeIdProblem, primaryAddressProblem, type Network } from '../ids.js';
import { METRICS_BUDGET, TIERS, type Tier } from '../sources/budget.js';
import type { SourceConfig } from '../sources/client.js';

export const DEFAULT_URLS = {
  data: 'https://glacier-api.avax.network',
  metrics: 'https://metrics.avax.network',
  node: 'http://127.0.0.1:9650',
} as const;

export type SourceName = keyof typeof DEFAULT_URLS;

export interface Pipeline {
  name: string;
  /** Where `run` lands it when --lake is not given: a folder or s3://bucket/prefix. */
  lake?: string;
  file: string;
  sources: Record<SourceName, SourceConfig>;
  streams: StreamConfig[];
}

type Problem = { path: string; message: string };

const SOURCE_KEYS: Record<string, 'string' | 'int' | 'boolean'> = {
  url: 'string',
  apiKey: 'string',
  keyHeader: 'string',
  concurrency: 'int',
  requestsPerSecond: 'int',
  timeoutMs: 'int',
  retries: 'int',
  tier: 'string',
  cuPerMinute: 'int',
  cuPerDay: 'int',
  assetNamespace: 'string',
  maxResponseBytes: 'int',
  maxRetryAfterSeconds: 'int',
  maxDownloadBytes: 'int',
  privateLinks: 'boolean',
};

// No `concurrency`: left out, a client keeps as many requests under way as its budget needs at the latency it sees.
export const SOURCE_DEFAULTS = { requestsPerSecond: 0, timeoutMs: 30_000, retries: 6 };

/** `${VAR}` reads the environment; an unset variable reads as empty. */
export function interpolate(s: string): string {
  return s.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => process.env[name] ?? '');
}

function describe(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v);
}

/** Units a time mistaken for seconds is often in, and how many of them make a second. */
const SUBSECOND_UNITS = [
  ['milliseconds', 1e3],
  ['microseconds', 1e6],
  ['nanoseconds', 1e9],
] as const;


/** A date, or a date-time in UTC (seconds and a whole fraction optional), as ISO 8601 writes them. */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/;

/** The Unix seconds of an ISO 8601 date or UTC date-time, or why the text is not one. */
function isoSeconds(text: string): { seconds: number } | { problem: string } {
  const m = ISO_TIME.exec(text);
  if (!m) return { problem: `${describe(text)} is not a time: give a date (2025-10-01, UTC midnight), a UTC date-time (2025-10-01T12:00:00Z) or whole Unix seconds` };
  const [, y, mo, d, h = '00', mi = '00', s = '00', fraction, zone] = m;
  if (m[4] !== undefined && zone === undefined) return { problem: `${describe(text)} has no time zone: give it in UTC, ending in Z (${text}Z)` };
  if (zone !== undefined && zone.toUpperCase() !== 'Z') return { problem: `${describe(text)} is not in UTC: give it ending in Z (${isoTime(Date.parse(text) / 1000) ?? 'the same time in UTC'})` };
  if (fraction !== undefined && /[1-9]/.test(fraction)) return { problem: `${describe(text)} is not a whole second: give ${text.slice(0, text.indexOf('.'))}Z` };
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  // Date.UTC carries a day 31 of a 30-day month into the next; such a text names no day.
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 19) !== `${y}-${mo}-${d}T${h}:${mi}:${s}`) return { problem: `${describe(text)} is not a date and time of the calendar` };
  return { seconds: ms / 1000 };
}

/**
 * A `unix_seconds` key's value, or why it cannot be one (and what was probably meant: the same
 * time in milliseconds, microseconds or nanoseconds). A date (`2025-10-01`, UTC midnight) or a
 * UTC date-time (`2025-10-01T12:00:00Z`) is read as its Unix seconds; so is a text of digits, as
 * a `${VAR}` gives.
 */
export function unixSeconds(v: unknown): { seconds: number } | { problem: string } {
  const { min, max } = UNIX_SECONDS;
  const range = `from ${isoTime(min)!.slice(0, 10)} to ${isoTime(max)!.slice(0, 10)} (${min} to ${max})`;
  // A YAML 1.1 document (`%YAML 1.1`) reads an unquoted date as a timestamp of its own.
  if (v instanceof Date && !Number.isNaN(v.getTime())) v = v.toISOString();
  if (typeof v === 'string' && !/^[0-9]+$/.test(v)) {
    const t = isoSeconds(v.trim());
    if ('problem' in t) return t;
    if (t.seconds >= min && t.seconds <= max) return t;
    return { problem: `${describe(v)} is not a time ${range}: ${t.seconds < min ? 'before any chain here' : 'after 2100-01-01'}` };
  }
  if (typeof v === 'string') v = Number(v);
  if (typeof v !== 'number' || !Number.isInteger(v)) return { problem: `must be a date (2025-10-01), a UTC date-time (2025-10-01T12:00:00Z) or whole Unix seconds (${isoTime(min)!.slice(0, 10)} is ${min}), not ${describe(v)}` };
  if (v >= min && v <= max) return { seconds: v };
  for (const [unit, per] of SUBSECOND_UNITS) {
    const s = v / per;
    if (s >= min && s <= max) return { problem: `${v} is not Unix seconds: as ${unit} it is ${isoTime(s)}; give ${Math.floor(s)}` };
  }
  const when = isoTime(v);
  const off = v < min ? `before any chain here` : 'after 2100-01-01';
  return { problem: `${v} is not Unix seconds ${range}${when ? `: it is ${when}, ${off}` : ''}` };
}

/** Where a blockchain id is asked for, the node also takes the primary network's aliases. */
const isChainRef = (x: unknown): x is string => isBlockchainId(x) || x === 'P' || x === 'X' || x === 'C';
const CHAIN_REF_PROBLEM = (x: unknown) => `${describe(x)} is not a blockchain id (cb58 of 32 bytes) or one of P, X, C`;

function checkOption(spec: OptionSpec, v: unknown, path: string, network: Network | undefined, out: Problem[]): unknown {
  const bad = (message: string) => {
    out.push({ path, message });
    return undefined;
  };
  const list = (check: (x: unknown, p: string) => string | null, map: (x: string) => string = (x) => x) => {
    if (!Array.isArray(v)) return bad(`must be a list, not ${describe(v)}`);
    if (v.length === 0) return bad('must not be empty');
    const seen = new Set<string>();
    v.forEach((x, i) => {
      const problem = check(x, `${path}[${i}]`);
      if (problem) out.push({ path: `${path}[${i}]`, message: problem });
      else if (seen.has(map(x as string))) out.push({ path: `${path}[${i}]`, message: `${describe(x)} is listed twice` });
      else seen.add(map(x as string));
    });
    return v.map((x) => (typeof x === 'string' ? map(x) : x));
  };
  switch (spec.kind) {
    case 'string':
      return typeof v === 'string' && v ? v : bad(`must be a non-empty string, not ${describe(v)}`);
    case 'int':
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) return bad(`must be an integer, not ${describe(v)}`);
      if (spec.min !== undefined && v < spec.min) return bad(`must be at least ${spec.min}, not ${v}`);
      return v;
    case 'number':
      if (typeof v !== 'number' || !Number.isFinite(v)) return bad(`must be a number, not ${describe(v)}`);
      if (spec.min !== undefined && v < spec.min) return bad(`must be at least ${spec.min}, not ${v}`);
      return v;
    case 'boolean':
      return typeof v === 'boolean' ? v : bad(`must be true or false, not ${describe(v)}`);
    case 'enum':
      return typeof v === 'string' && spec.values!.includes(v) ? v : bad(`${describe(v)} is not one of ${spec.values!.join(', ')}`);
    case 'network':
      return typeof v === 'string' && (NETWORKS as readonly string[]).includes(v) ? v : bad(`${describe(v)} is not a network (${NETWORKS.join(', ')})`);
    case 'evm_chain_id': {
      const s = typeof v === 'number' ? String(v) : v;
      return isEvmChainId(s) || isBlockchainId(s) ? s : bad(`${describe(v)} is not an EVM chain id (digits, e.g. "43114") or a cb58 blockchain id`);
    }
    case 'metrics_chain_id[]':
      if (Array.isArray(v)) v = v.map((x) => (typeof x === 'number' ? String(x) : x));
      return list((x) => (isEvmChainId(x) || ['total', 'mainnet', 'testnet'].includes(x as string) ? null : `${describe(x)} is not an EVM chain id or one of total, mainnet, testnet`));
    case 'evm_address[]':
      return list((x) => (isEvmAddress(x) ? null : `${describe(x)} is not an EVM address (0x + 40 hex digits)`), (x) => x.toLowerCase());
    case 'node_id[]':
      return list((x) => {
        const p = nodeIdProblem(x);
        return p ? `${describe(x)} is not a NodeID (NodeID- + cb58 of 20 bytes): it ${p}` : null;
      });
    case 'primary_address[]':
      return list((x) => {
        if (!network) return null; // the network's own problem is reported already
        const p = primaryAddressProblem(x, network);
        return p ? `${describe(x)} is not a ${network} P-/X-chain address (bech32): it ${p}` : null;
      });
    case 'metric[]':
      return list((x) => ((METRICS as readonly string[]).includes(x as string) ? null : `${describe(x)} is not a metric (${METRICS.join(', ')})`));
    case 'string[]':
      return list((x) => (typeof x === 'string' && x ? null : `${describe(x)} is not a non-empty string`));
    case 'cb58_id[]':
      return list((x) => (isBlockchainId(x) ? null : `${describe(x)} is not an id (cb58 of 32 bytes)`));
    case 'blockchain_id':
      return isChainRef(v) ? v : bad(CHAIN_REF_PROBLEM(v));
    case 'blockchain_id[]':
      return list((x) => (isChainRef(x) ? null : CHAIN_REF_PROBLEM(x)));
    case 'x_address[]':
      // xvm.getUTXOs reads an address of its own chain only (avalanchego vms/components/avax/addresses.go, ParseLocalAddress).
      return list((x) => {
        const p = primaryAddressProblem(x, network, ['X']);
        return p ? `${describe(x)} is not an X-chain address (X- and bech32): it ${p}` : null;
      });
    case 'evm_block': {
      const p = evmBlockProblem(v);
      return p ? bad(`${describe(v)} ${p}`) : v;
    }
    case 'unix_seconds': {
      const t = unixSeconds(v);
      return 'problem' in t ? bad(t.problem) : t.seconds;
    }
  }
}

/** A key that is not one of `known` (a handful): the one meant first when one is close, else them all. */
function unknownKey(key: string, known: string[], of = ''): string {
  const meant = closest(key, known);
  return meant === undefined ? `unknown key${of} (known: ${known.join(', ')})` : `unknown key${of}; did you mean ${meant}?`;
}

function checkStream(raw: unknown, at: string, out: Problem[]): StreamConfig | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    out.push({ path: at, message: 'must be a mapping with a table key' });
    return undefined;
  }
  const entry = raw as Record<string, unknown>;
  const decl: StreamDecl | undefined = typeof entry.table === 'string' ? STREAM_BY_TABLE.get(entry.table) : undefined;
  if (!decl) {
    // The tables are many: the one meant, and where to see them all.
    const tables = STREAMS.map((s) => s.table);
    const written = entry.table === undefined ? Object.keys(entry).find((k) => closest(k, ['table']) === 'table') : undefined;
    if (written !== undefined) out.push({ path: `${at}.${written}`, message: 'unknown key; did you mean table?' });
    else if (entry.table === undefined) out.push({ path: `${at}.table`, message: 'is required: the table this entry lands (`chainlake tables` lists them)' });
    else out.push({ path: `${at}.table`, message: `${describe(entry.table)} is not a table${didYouMean(String(entry.table), tables)} (\`chainlake tables\` lists them)` });
    return undefined;
  }
  const before = out.length;
  const cfg: StreamConfig = { table: decl.table };
  const network = typeof entry.network === 'string' && (NETWORKS as readonly string[]).includes(entry.network) ? (entry.network as Network) : undefined;
  for (const [key, value] of Object.entries(entry)) {
    if (key === 'table') continue;
    if (key === 'pageSize') {
      const { min, max } = decl.pageSize;
      if (max === 0) out.push({ path: `${at}.pageSize`, message: `${decl.table} takes no page size` });
      else if (typeof value !== 'number' || !Number.isInteger(value) || value < Math.max(min, 1) || value > max)
        out.push({ path: `${at}.pageSize`, message: `${describe(value)} is out of bounds for ${decl.endpoint} (${Math.max(min, 1)} to ${max})${decl.pageSize.note ? `: ${decl.pageSize.note}` : ''}` });
      else cfg.pageSize = value;
      continue;
    }
    const spec = decl.options[key];
    if (!spec) {
      out.push({ path: `${at}.${key}`, message: unknownKey(key, ['table', 'pageSize', ...Object.keys(decl.options)], ` for ${decl.table}`) });
      continue;
    }
    const v = checkOption(spec, typeof value === 'string' ? interpolate(value) : value, `${at}.${key}`, network, out);
    if (v !== undefined) cfg[key] = v;
  }
  for (const [key, spec] of Object.entries(decl.options))
    if (spec.required && entry[key] === undefined) out.push({ path: `${at}.${key}`, message: `is required for ${decl.table}` });
  if (out.length > before) return undefined;
  for (const [key, message] of decl.check?.(cfg) ?? []) out.push({ path: `${at}.${key}`, message });
  return out.length > before ? undefined : cfg;
}

function checkSource(raw: unknown, at: string, name: SourceName, out: Problem[]): SourceConfig {
  const src: SourceConfig = { url: DEFAULT_URLS[name], ...SOURCE_DEFAULTS };
  if (raw === undefined || raw === null) return src;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    out.push({ path: at, message: 'must be a mapping' });
    return src;
  }
  let tier: string | undefined;
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    const kind = SOURCE_KEYS[key];
    if (!kind) {
      out.push({ path: `${at}.${key}`, message: unknownKey(key, Object.keys(SOURCE_KEYS)) });
      continue;
    }
    if (kind === 'int') {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) out.push({ path: `${at}.${key}`, message: `must be a whole number >= 0, not ${describe(value)}` });
      else (src as unknown as Record<string, unknown>)[key] = value;
      continue;
    }
    if (kind === 'boolean') {
      if (key === 'privateLinks' && name !== 'data') out.push({ path: `${at}.${key}`, message: 'belongs to the data source (where export links come from)' });
      else if (typeof value !== 'boolean') out.push({ path: `${at}.${key}`, message: `must be true or false, not ${describe(value)}` });
      else (src as unknown as Record<string, unknown>)[key] = value;
      continue;
    }
    if (typeof value !== 'string') {
      // Never echo what was written as a key, even when it is malformed.
      const shown = key === 'apiKey' ? `a ${Array.isArray(value) ? 'list' : typeof value} (value not shown)` : describe(value);
      out.push({ path: `${at}.${key}`, message: `must be a string, not ${shown}` });
      continue;
    }
    const s = interpolate(value);
    if (key === 'apiKey') {
      if (s) src.apiKey = s; // an unset ${VAR} means no key
      // Said by a run against a service (a typo in a variable's name must not pass for "no key").
      else {
        const unset = [...value.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]!).filter((v) => !process.env[v]);
        if (unset.length) src.apiKeyUnset = unset;
      }
    } else if (key === 'url') {
      try {
        const u = new URL(s);
        if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
        src.url = s.replace(/\/+$/, '');
      } catch {
        out.push({ path: `${at}.url`, message: `${describe(s)} is not an http(s) URL` });
      }
    } else if (key === 'keyHeader') {
      if (!/^[A-Za-z0-9-]+$/.test(s)) out.push({ path: `${at}.keyHeader`, message: `${describe(s)} is not a header name` });
      else src.keyHeader = s.toLowerCase();
    } else if (key === 'tier') {
      tier = s;
    } else if (key === 'assetNamespace') {
      if (name !== 'node') out.push({ path: `${at}.assetNamespace`, message: `belongs to the node source (the asset chain's JSON-RPC namespace)` });
      else if (!(ASSET_NAMESPACES as readonly string[]).includes(s)) out.push({ path: `${at}.assetNamespace`, message: `${describe(s)} is not one of ${ASSET_NAMESPACES.join(', ')} (leave it out to find it on the first call)` });
      else src.assetNamespace = s as AssetNamespace;
    }
  }
  if (src.concurrency !== undefined && src.concurrency < 1) out.push({ path: `${at}.concurrency`, message: 'must be at least 1' });
  if (tier !== undefined) {
    if (name !== 'data') {
      const published = name === 'metrics' ? `one published budget, ${METRICS_BUDGET.cuPerMinute} CU/min and ${METRICS_BUDGET.cuPerDay} CU/day` : 'no published budget';
      out.push({ path: `${at}.tier`, message: `tiers belong to the data service; the ${name} service has ${published}: set cuPerMinute / cuPerDay instead` });
    } else if (!Object.hasOwn(TIERS, tier)) {
      out.push({ path: `${at}.tier`, message: `${describe(tier)} is not a tier (${Object.keys(TIERS).join(', ')})` });
    } else {
      // Explicit numbers override the tier's.
      src.cuPerMinute ??= TIERS[tier as Tier].cuPerMinute;
      src.cuPerDay ??= TIERS[tier as Tier].cuPerDay;
    }
  }
  if (src.maxDownloadBytes !== undefined && name !== 'data') out.push({ path: `${at}.maxDownloadBytes`, message: 'belongs to the data source (export downloads)' });
  for (const key of ['maxResponseBytes', 'maxDownloadBytes'] as const)
    if (src[key] !== undefined && src[key]! < 1024) out.push({ path: `${at}.${key}`, message: `must be at least 1024 (bytes), not ${src[key]}` });
  for (const key of ['cuPerMinute', 'cuPerDay'] as const)
    if (src[key] === 0) out.push({ path: `${at}.${key}`, message: 'must be at least 1 (leave it out to learn the budget from the service)' });
  return src;
}

/** Checks a parsed pipeline document; `file` only names the place in messages. */
export function checkPipeline(doc: unknown, file: string): Pipeline {
  const out: Problem[] = [];
  const fail = () => {
    throw new UsageError(out.map((p) => `${file}: ${p.path}: ${p.message}`).join('\n'));
  };
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) {
    out.push({ path: '(top)', message: 'must be a mapping with name, sources and streams' });
    fail();
  }
  const top = doc as Record<string, unknown>;
  for (const key of Object.keys(top))
    if (!['name', 'lake', 'sources', 'streams'].includes(key)) out.push({ path: key, message: unknownKey(key, ['name', 'lake', 'sources', 'streams']) });
  let lake: string | undefined;
  if (top.lake !== undefined) {
    // `${VAR}` reads the environment, as in sources: a bucket may differ between machines.
    if (typeof top.lake !== 'string' || interpolate(top.lake).trim() === '') out.push({ path: 'lake', message: `${describe(top.lake)} must be a lake folder or an s3://bucket/prefix URL` });
    else lake = interpolate(top.lake).trim();
  }
  const name = top.name;
  if (typeof name !== 'string' || !/^[A-Za-z0-9_.-]+$/.test(name)) out.push({ path: 'name', message: `${describe(name)} must be a name of letters, digits, _ . -` });
  const sources = (top.sources ?? {}) as Record<string, unknown>;
  const names = Object.keys(DEFAULT_URLS) as SourceName[];
  if (typeof sources !== 'object' || Array.isArray(sources)) out.push({ path: 'sources', message: `must be a mapping of ${names.join(', ')}` });
  else for (const key of Object.keys(sources)) if (!(names as string[]).includes(key)) out.push({ path: `sources.${key}`, message: `unknown source${didYouMean(key, names)} (known: ${names.join(', ')})` });
  const checked = Object.fromEntries(names.map((n) => [n, checkSource(sources[n], `sources.${n}`, n, out)])) as Record<SourceName, SourceConfig>;
  const streams: StreamConfig[] = [];
  if (!Array.isArray(top.streams) || top.streams.length === 0) out.push({ path: 'streams', message: 'must be a non-empty list' });
  else
    top.streams.forEach((s, i) => {
      const cfg = checkStream(s, `streams[${i}]`, out);
      if (cfg && STREAM_BY_TABLE.get(cfg.table)!.needsApiKey && checked.data.apiKey === undefined) {
        // Checked here, not at the first request: the service would answer 401 only after the run began.
        out.push({ path: `streams[${i}].table`, message: `${cfg.table} reports on the data service's API key: set sources.data.apiKey (e.g. "\${CHAINLAKE_API_KEY}"; an unset variable means no key)` });
      } else if (cfg) streams.push(cfg);
    });
  if (out.length) fail();
  return { name: name as string, file, ...(lake !== undefined ? { lake } : {}), sources: checked, streams };
}

export function loadPipeline(file: string): Pipeline {
  return parsePipeline(readPipeline(file), file);
}

/** A pipeline file's text, as written (its `${VAR}` not yet read). */
export function readPipeline(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`${file}: cannot read the pipeline: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

function parseYaml(text: string, file: string): unknown {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true });
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    const pos = e.linePos?.[0];
    throw new UsageError(`${file}${pos ? `:${pos.line}:${pos.col}` : ''}: invalid YAML: ${e.message.split('\n')[0]}`);
  }
  return doc.toJS();
}

/** A pipeline from its text; `${VAR}` read from this process's environment. `file` names the place in messages. */
export function parsePipeline(text: string, file: string): Pipeline {
  return checkPipeline(parseYaml(text, file), file);
}

/**
 * The sources whose API key is written in the pipeline's text rather than read from the
 * environment (`${VAR}`): such a text must not travel (through a queue) to other machines.
 */
export function writtenKeys(text: string, file: string): string[] {
  const doc = parseYaml(text, file) as { sources?: Record<string, { apiKey?: unknown } | undefined> } | null;
  return Object.entries(doc?.sources ?? {})
    .filter(([, src]) => typeof src?.apiKey === 'string' && src.apiKey.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*\}/g, '').trim() !== '')
    .map(([name]) => `sources.${name}.apiKey`);
}
