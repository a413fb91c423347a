// Identifier forms of the chain (docs/services.md, Identifiers): checked before any request is sent,
// and encoded the same way by the simulator so that both sides agree on what is valid.
import { createHash } from 'node:crypto';
import { base58, bech32 } from '@scure/base';

export const NETWORKS = ['mainnet', 'fuji', 'testnet'] as const;
export type Network = (typeof NETWORKS)[number];

/** bech32 human-readable part of primary-network addresses per network name. */
export const NETWORK_HRP: Record<Network, string> = { mainnet: 'avax', fuji: 'fuji', testnet: 'fuji' };

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const EVM_CHAIN_ID = /^[1-9][0-9]{0,18}$/;
/** cb58 blockchain ids are base58 of 32 bytes + 4 checksum bytes: 48 to 50 characters. */
const CB58_CHARS = /^[1-9A-HJ-NP-Za-km-z]+$/;

export function isEvmAddress(s: unknown): s is string {
  return typeof s === 'string' && EVM_ADDRESS.test(s);
}

export function isEvmChainId(s: unknown): s is string {
  return typeof s === 'string' && EVM_CHAIN_ID.test(s);
}

function sha256(bytes: Uint8Array): Uint8Array {
  return createHash('sha256').update(bytes).digest();
}

/** cb58: base58 of the payload followed by the last 4 bytes of its sha256. */
export function cb58Encode(payload: Uint8Array): string {
  const sum = sha256(payload).subarray(28);
  const all = new Uint8Array(payload.length + 4);
  all.set(payload);
  all.set(sum, payload.length);
  return base58.encode(all);
}

/** Returns the payload, or a reason the string is not cb58. */
export function cb58Decode(s: string): Uint8Array | string {
  if (!CB58_CHARS.test(s)) return 'has characters outside base58';
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(s);
  } catch {
    return 'is not base58';
  }
  if (bytes.length < 5) return 'is too short for cb58';
  const payload = bytes.subarray(0, bytes.length - 4);
  const sum = sha256(payload).subarray(28);
  for (let i = 0; i < 4; i++) if (sum[i] !== bytes[bytes.length - 4 + i]) return 'has a bad cb58 checksum';
  return payload;
}

export function encodeNodeId(bytes20: Uint8Array): string {
  if (bytes20.length !== 20) throw new Error('a node id is 20 bytes');
  return 'NodeID-' + cb58Encode(bytes20);
}

/** null when valid, else why not. */
export function nodeIdProblem(s: unknown): string | null {
  if (typeof s !== 'string') return 'is not a string';
  if (!s.startsWith('NodeID-')) return 'does not start with NodeID-';
  const payload = cb58Decode(s.slice('NodeID-'.length));
  if (typeof payload === 'string') return payload;
  if (payload.length !== 20) return `encodes ${payload.length} bytes, not 20`;
  return null;
}

export function isBlockchainId(s: unknown): boolean {
  if (typeof s !== 'string') return false;
  const payload = cb58Decode(s);
  return typeof payload !== 'string' && payload.length === 32;
}

/** A primary-network address: `P-avax1…`, `X-avax1…`, or bare `avax1…` (docs/services.md, Identifiers). */
export function encodePrimaryAddress(network: Network, bytes20: Uint8Array, chain: 'P' | 'X' | '' = 'P'): string {
  const body = bech32.encode(NETWORK_HRP[network], bech32.toWords(bytes20));
  return chain ? `${chain}-${body}` : body;
}

/** Prefixes of networks a node may run beside mainnet and fuji (a local network, a custom one). */
const OTHER_HRPS = ['local', 'custom'];

/** A chain prefix of a primary-network address (`P-avax1…`); '' is none (`avax1…`). */
export type ChainPrefix = '' | 'P' | 'X' | 'C';

/**
 * What the data service's rewards, pending rewards, delegators and listChainIds take (docs/services.md,
 * Identifiers): P- or X- addresses, or the address without a chain.
 */
export const SERVICE_ADDRESS_PREFIXES: readonly ChainPrefix[] = ['P', 'X', ''];

function prefixList(prefixes: readonly ChainPrefix[]): string {
  const names = prefixes.map((p) => (p ? `${p}-` : 'none'));
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)}` : names[0]!;
}

/**
 * `network` undefined: an address of any network (its prefix one of avax, fuji, local, custom).
 * `prefixes`: the chain prefixes the receiver takes.
 */
export function primaryAddressProblem(s: unknown, network: Network | undefined, prefixes: readonly ChainPrefix[] = SERVICE_ADDRESS_PREFIXES): string | null {
  if (typeof s !== 'string') return 'is not a string';
  // bech32 has no '-': what comes before one names a chain.
  const dash = s.indexOf('-');
  const chain = dash < 0 ? '' : s.slice(0, dash);
  const body = s.slice(dash + 1);
  if (!(prefixes as readonly string[]).includes(chain)) return `${chain ? `has the chain prefix "${chain}-"` : 'has no chain prefix'} (only ${prefixList(prefixes)} here)`;
  const hrps = network ? [NETWORK_HRP[network]] : [...new Set(Object.values(NETWORK_HRP)), ...OTHER_HRPS];
  if (body.toLowerCase() !== body && body.toUpperCase() !== body) return 'mixes upper and lower case';
  let decoded: { prefix: string; words: number[] };
  try {
    decoded = bech32.decode(body.toLowerCase() as `${string}1${string}`);
  } catch {
    return 'is not valid bech32';
  }
  if (!hrps.includes(decoded.prefix)) return network ? `has prefix "${decoded.prefix}", not "${hrps[0]}" of ${network}` : `has prefix "${decoded.prefix}", not one of ${hrps.join(', ')}`;
  const bytes = bech32.fromWords(decoded.words);
  if (bytes.length !== 20) return `encodes ${bytes.length} bytes, not 20`;
  return null;
}

/** The block tags an EVM node takes for a block (subnet-evm rpc/types.go, BlockNumberOrHash). */
export const EVM_BLOCK_TAGS = ['latest', 'earliest', 'pending', 'accepted', 'finalized', 'safe'] as const;

const INT64_MAX = 2n ** 63n - 1n;

/**
 * A block as an EVM node reads one (eth_feeConfig's argument): a number in hex (`0x` and no
 * leading zero, as its hexutil decodes it, at most 2^63 - 1), a hash (`0x` and 64 hex digits) or a
 * tag; null when valid, else why not.
 */
export function evmBlockProblem(v: unknown): string | null {
  if (typeof v === 'number' || (typeof v === 'string' && /^[0-9]+$/.test(v))) {
    const hex = typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? ` (${v} is "0x${v.toString(16)}")` : '';
    return `is a decimal number: the node takes a block number in hex${hex}`;
  }
  if (typeof v !== 'string') return 'is not a string';
  if ((EVM_BLOCK_TAGS as readonly string[]).includes(v) || /^0x[0-9a-fA-F]{64}$/.test(v)) return null;
  if (/^0x0[0-9a-fA-F]+$/.test(v)) return 'has a leading zero, which the node refuses in a hex number';
  if (/^0x[0-9a-fA-F]+$/.test(v)) return BigInt(v) > INT64_MAX ? 'is above 2^63 - 1, the highest block number the node takes' : null;
  return `is not a hex block number (0x...), a block hash (0x and 64 hex digits) or one of ${EVM_BLOCK_TAGS.join(', ')}`;
}
