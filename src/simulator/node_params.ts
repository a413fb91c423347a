// Parameters of the simulated node's JSON-RPC methods: each parser takes what a call sent and
// returns it checked, or throws the node's error naming the parameter (-32602 for a malformed
// one; -32000 where the node parses the value but refuses it).
import { bech32 } from '@scure/base';
import { evmBlockProblem, isBlockchainId, nodeIdProblem } from '../ids.js';
import { invalidParams, serverError } from './errors.js';

type Obj = Record<string, unknown>;

/** The most UTXOs one xvm.getUTXOs answer holds; a limit of 0 or less, or above it, means this many. */
export const UTXO_MAX_LIMIT = 1024;

export function paramsObject(p: unknown): Obj {
  if (p === undefined || p === null) return {};
  if (typeof p !== 'object' || Array.isArray(p)) throw invalidParams('params must be an object');
  return p as Obj;
}

export function paramsArray(p: unknown): unknown[] {
  if (p === undefined || p === null) return [];
  if (!Array.isArray(p)) throw invalidParams('params must be an array');
  return p;
}

export function stringParam(p: Obj, name: string, required = true): string | undefined {
  const v = p[name];
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'string' || v === '') throw invalidParams(`${name} must be a non-empty string`);
  return v;
}

export function stringList(p: Obj, name: string): string[] | undefined {
  const v = p[name];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw invalidParams(`${name} must be an array of strings`);
  return v as string[];
}

export function nodeIdsParam(p: Obj): string[] | undefined {
  const ids = stringList(p, 'nodeIDs');
  for (const id of ids ?? []) {
    const problem = nodeIdProblem(id);
    if (problem) throw invalidParams(`nodeIDs: "${id}" ${problem}`);
  }
  return ids;
}

export function subnetIdParam(p: Obj): string | undefined {
  const subnetID = stringParam(p, 'subnetID', false);
  if (subnetID !== undefined && !isBlockchainId(subnetID)) throw invalidParams(`subnetID "${subnetID}" is not an id (cb58 of 32 bytes)`);
  return subnetID;
}

/** `encoding`, hex when absent. */
export function encodingParam(p: Obj, allowed: string[]): string {
  const e = stringParam(p, 'encoding', false) ?? 'hex';
  if (!allowed.includes(e)) throw invalidParams(`encoding must be one of ${allowed.join(', ')}, got "${e}"`);
  return e;
}

/** `height` as sent (decimal digits): the node's error repeats it as written. */
export function heightParam(p: Obj): string {
  const raw = stringParam(p, 'height')!;
  if (!/^[0-9]+$/.test(raw)) throw invalidParams(`height must be a decimal string, got "${raw}"`);
  return raw;
}

function xAddressParam(a: string): string {
  const body = a.replace(/^X-/, '');
  let prefix: string;
  try {
    prefix = bech32.decode(body as `${string}1${string}`).prefix;
  } catch {
    throw invalidParams(`couldn't parse address "${a}"`);
  }
  if (prefix !== 'avax') throw serverError(`address "${a}" has hrp "${prefix}", expected "avax" on this network`);
  return a;
}

/** `addresses` of xvm.getUTXOs: at least one, each an asset chain address of this network. */
export function xAddressesParam(p: Obj): string[] {
  const addresses = stringList(p, 'addresses');
  if (!addresses?.length) throw invalidParams('addresses must be a non-empty array of strings');
  addresses.forEach(xAddressParam);
  return addresses;
}

/** `limit` of xvm.getUTXOs, an integer, as the page size it gives (see UTXO_MAX_LIMIT). */
export function utxoLimitParam(p: Obj): number {
  const limit = p.limit === undefined ? UTXO_MAX_LIMIT : typeof p.limit === 'number' && Number.isInteger(p.limit) ? p.limit : NaN;
  if (Number.isNaN(limit)) throw invalidParams('limit must be an integer');
  return limit <= 0 || limit > UTXO_MAX_LIMIT ? UTXO_MAX_LIMIT : limit;
}

/** `startIndex` of xvm.getUTXOs: the endIndex of the page before. */
export function startIndexParam(p: Obj): { address: string; utxo: string } | undefined {
  const s = p.startIndex as Obj | undefined;
  if (s !== undefined && (typeof s !== 'object' || s === null || typeof s.address !== 'string' || typeof s.utxo !== 'string')) throw invalidParams('startIndex must be an object with address and utxo');
  return s as { address: string; utxo: string } | undefined;
}

/** The block argument of eth_feeConfig, as subnet-evm decodes it (the rule chainlake checks too), or none. */
export function blockParam(params: unknown): unknown {
  const [blk] = paramsArray(params);
  const problem = blk === undefined ? null : evmBlockProblem(blk);
  if (problem) throw invalidParams(`invalid argument 0: ${JSON.stringify(blk)} ${problem}`);
  return blk;
}

/** The time argument of eth_getActiveRulesAt: Unix seconds, or none. */
export function unixTimeParam(params: unknown): number | undefined {
  const [ts] = paramsArray(params);
  if (ts !== undefined && !(typeof ts === 'number' && Number.isSafeInteger(ts) && ts >= 0)) throw invalidParams(`invalid argument 0: ${JSON.stringify(ts)} is not a Unix time`);
  return ts as number | undefined;
}
