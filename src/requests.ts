// The rules of what chainlake sends beyond a query: the names of the data service's key header
// (docs/services.md, Data service) and the two POST bodies (docs/services.md, Export operations
// and signatures, and the OpenAPI's CreateEvmTransactionExportRequest,
// CreatePrimaryNetworkTransactionExportRequest and SignatureAggregatorRequest). The CLI checks
// them before sending anything and the simulator answers by the same rules, so both sides agree
// on what is valid.
import { cb58Decode, isBlockchainId, isEvmAddress, isEvmChainId, primaryAddressProblem } from './ids.js';

/**
 * The names the data service's key header goes by: the published OpenAPI's security scheme uses
 * the first, the reference the second. A key under a name the service
 * does not read is ignored without a word, so unless a pipeline pins one, the key goes under both.
 */
export const API_KEY_HEADERS = ['x-glacier-api-key', 'x-data-api-key'] as const;

export const EVM_EXPORT = 'TRANSACTION_EXPORT_EVM';
export const EXPORT_TYPES = [EVM_EXPORT, 'TRANSACTION_EXPORT_PRIMARY_NETWORK', 'TRANSACTION_EXPORT_PRIMARY_NETWORK_STAKING', 'TRANSACTION_EXPORT_PRIMARY_NETWORK_SIMPLE'] as const;
export type ExportType = (typeof EXPORT_TYPES)[number];

/** includeChains of a primary-network export: the OpenAPI's enum (blockchain ids and aliases). */
export const PRIMARY_CHAINS = [
  '11111111111111111111111111111111LpoYY',
  '2oYMBNV4eNHyqk2fjjV5nVQLDbtmNJzq5s3qs3Lo6ftnC6FByM',
  '2JVSBoinj9C2J33VntvzYtVJNZdN2NKiwwKjcumHUWEb5DbBrm',
  '2q9e4r6Mu3U68nU1fYjgbR6JvwrRx36CohpAX5UQxse55x1Q5',
  'yH8D7ThNJkxmtkuv2jgBa4P1Rn3Qpr4pPr7QYNfcdoS6k6HWp',
  'p-chain',
  'x-chain',
  'c-chain',
] as const;

export interface ExportOptions {
  addresses?: string[];
  includeChains?: string[];
  /** primary-network exports only */
  cChainEvmAddresses?: string[];
}

export interface ExportRequest {
  type: string;
  firstDate?: string;
  lastDate?: string;
  options: ExportOptions;
}

/** [field, message]: the field as named in the request body (`options.addresses`). */
export type Problem = [string, string];

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Days since 1970-01-01 of a YYYY-MM-DD date, or a reason it is not one. */
export function dayOf(s: string): number | string {
  const m = DATE.exec(s);
  if (!m) return 'is not a date of the form YYYY-MM-DD';
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const t = Date.UTC(y, mo - 1, d);
  // Date.UTC rolls 2024-02-30 over to March; a real date survives the round trip.
  const back = new Date(t);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return 'is not a calendar date';
  return t / 86_400_000;
}

export function dateOfDay(day: number): string {
  return new Date(day * 86_400_000).toISOString().slice(0, 10);
}

function listProblems(field: string, v: string[] | undefined, required: boolean, check: (x: string) => string | null, out: Problem[]): void {
  if (v === undefined) {
    if (required) out.push([field, 'is required']);
    return;
  }
  if (v.length === 0) {
    out.push([field, 'must not be empty']);
    return;
  }
  const seen = new Set<string>();
  for (const x of v) {
    const p = check(x);
    if (p) out.push([field, `${JSON.stringify(x)} ${p}`]);
    else if (seen.has(x.toLowerCase())) out.push([field, `${JSON.stringify(x)} is listed twice`]);
    seen.add(x.toLowerCase());
  }
}

const evmAddressProblem = (x: string) => (isEvmAddress(x) ? null : 'is not an EVM address (0x + 40 hex digits)');

/**
 * A primary-network export names no network, so an address of either network is taken; its
 * problem is told against the network its prefix names (mainnet for anything not fuji).
 */
function anyNetworkAddressProblem(x: string): string | null {
  const fuji = /^([PX]-)?fuji1/i.test(x);
  const p = primaryAddressProblem(x, fuji ? 'fuji' : 'mainnet');
  return p ? `is not a P-/X-chain address (bech32 avax1... or fuji1..., with or without P-/X-): it ${p}` : null;
}

/** Everything wrong with an export request, in the order of its fields. */
export function exportRequestProblems(r: ExportRequest): Problem[] {
  const out: Problem[] = [];
  if (!(EXPORT_TYPES as readonly string[]).includes(r.type)) out.push(['type', `${JSON.stringify(r.type)} is not one of ${EXPORT_TYPES.join(', ')}`]);
  const first = r.firstDate === undefined ? undefined : dayOf(r.firstDate);
  const last = r.lastDate === undefined ? undefined : dayOf(r.lastDate);
  if (typeof first === 'string') out.push(['firstDate', `${JSON.stringify(r.firstDate)} ${first}`]);
  if (typeof last === 'string') out.push(['lastDate', `${JSON.stringify(r.lastDate)} ${last}`]);
  if (typeof first === 'number' && typeof last === 'number' && first > last) out.push(['firstDate', `${JSON.stringify(r.firstDate)} is after the last date ${JSON.stringify(r.lastDate)}`]);
  const o = r.options;
  // Which options apply depends on the type: an unknown type has no rules to tell.
  if (out.some(([f]) => f === 'type')) return out;
  if (r.type === EVM_EXPORT) {
    listProblems('options.addresses', o.addresses, true, evmAddressProblem, out);
    listProblems('options.includeChains', o.includeChains, true, (x) => (isEvmChainId(x) ? null : 'is not an EVM chain id (digits, e.g. 43114)'), out);
    if (o.cChainEvmAddresses !== undefined) out.push(['options.cChainEvmAddresses', `belongs to the primary-network exports, not ${EVM_EXPORT}`]);
  } else {
    listProblems('options.addresses', o.addresses, false, anyNetworkAddressProblem, out);
    listProblems('options.includeChains', o.includeChains, true, (x) => ((PRIMARY_CHAINS as readonly string[]).includes(x) ? null : `is not one of ${PRIMARY_CHAINS.join(', ')}`), out);
    listProblems('options.cChainEvmAddresses', o.cChainEvmAddresses, false, evmAddressProblem, out);
  }
  return out;
}

export interface SignatureRequest {
  message?: string;
  justification?: string;
  signingSubnetId?: string;
  quorumPercentage?: number;
  quorumPercentageBuffer?: number;
  pChainHeight?: number;
}

const HEX_BYTES = /^(0x)?([0-9a-fA-F]{2})+$/;

/** A subnet id is 32 bytes, as hex (optional 0x) or cb58; null when valid. */
export function subnetIdProblem(s: string): string | null {
  if (/^(0x)?[0-9a-fA-F]+$/.test(s) && (s.startsWith('0x') || !isBlockchainId(s))) {
    const digits = s.replace(/^0x/, '').length;
    return digits === 64 ? null : `is ${digits} hex digits, not 64 (32 bytes)`;
  }
  const payload = cb58Decode(s);
  if (typeof payload === 'string') return `is neither hex (64 digits, optional 0x) nor cb58: it ${payload}`;
  return payload.length === 32 ? null : `encodes ${payload.length} bytes, not 32`;
}

/**
 * Everything wrong with a signature aggregation request. The spec asks for "either message or
 * justification" and forbids neither both nor one alone: at least one is required.
 */
export function signatureRequestProblems(r: SignatureRequest): Problem[] {
  const out: Problem[] = [];
  if (r.message === undefined && r.justification === undefined) out.push(['message', 'either message or justification is required']);
  for (const f of ['message', 'justification'] as const) {
    const v = r[f];
    if (v !== undefined && !HEX_BYTES.test(v)) out.push([f, `${JSON.stringify(v.length > 40 ? v.slice(0, 40) + '...' : v)} is not hex bytes (pairs of hex digits, optional 0x)`]);
  }
  if (r.signingSubnetId !== undefined) {
    const p = subnetIdProblem(r.signingSubnetId);
    if (p) out.push(['signingSubnetId', `${JSON.stringify(r.signingSubnetId)} ${p}`]);
  }
  const percent = (f: 'quorumPercentage' | 'quorumPercentageBuffer') => {
    const v = r[f];
    if (v === undefined) return true;
    if (Number.isInteger(v) && v >= 0 && v <= 100) return true;
    out.push([f, `${v} is not an integer from 0 to 100`]);
    return false;
  };
  const quorumOk = percent('quorumPercentage');
  const bufferOk = percent('quorumPercentageBuffer');
  // The default quorum (67) counts: a buffer of 40 alone is over 100 too.
  const quorum = r.quorumPercentage ?? 67;
  const buffer = r.quorumPercentageBuffer ?? 0;
  if (quorumOk && bufferOk && quorum + buffer > 100)
    out.push(['quorumPercentageBuffer', `the quorum ${quorum}${r.quorumPercentage === undefined ? ' (the default)' : ''} plus the buffer ${buffer} is ${quorum + buffer}, over 100`]);
  if (r.pChainHeight !== undefined && !(Number.isSafeInteger(r.pChainHeight) && r.pChainHeight >= 0)) out.push(['pChainHeight', `${r.pChainHeight} is not a whole number >= 0`]);
  return out;
}
