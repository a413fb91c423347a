// The asset chain's byte encoding as the simulated node sends it: a UTXO in the node's codec
// (version 0, a secp256k1fx transfer output), and the hex form with its checksum that xvm answers
// carry (docs/services.md, Node JSON-RPC).
import { createHash } from 'node:crypto';
import { bech32 } from '@scure/base';
import { cb58Decode, cb58Encode } from '../ids.js';
import { toHex } from './hash.js';

/** A UTXO of the asset chain: its fields, its codec bytes, and the id paging names it by. */
export interface SimUtxo {
  txId: string;
  outputIndex: number;
  assetId: string;
  amount: string;
  locktime: string;
  threshold: number;
  /** X-avax1... */
  owners: string[];
  /** 0x + codec bytes + checksum: what xvm.getUTXOs sends */
  hex: string;
  /** cb58 of sha256(bytes): its place in a listing (the utxo of an index) */
  key: string;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

function u64(n: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(n);
  return b;
}

/** The node's hex encoding: 0x, the bytes, then the last 4 bytes of their sha256. */
export function withChecksum(bytes: Uint8Array): string {
  const sum = createHash('sha256').update(bytes).digest().subarray(28);
  return '0x' + toHex(bytes) + toHex(sum);
}

function shortId(address: string): Uint8Array {
  const body = address.replace(/^[PXC]-/, '');
  return bech32.fromWords(bech32.decode(body as `${string}1${string}`).words);
}

export function encodeUtxo(u: Omit<SimUtxo, 'hex' | 'key'>): { hex: string; key: string } {
  const payload = cb58Decode(u.txId) as Uint8Array;
  const asset = cb58Decode(u.assetId) as Uint8Array;
  const bytes = Buffer.concat([
    Buffer.from([0, 0]), // codec version
    payload, u32(u.outputIndex), asset,
    u32(7), // secp256k1fx transfer output
    u64(BigInt(u.amount)), u64(BigInt(u.locktime)), u32(u.threshold), u32(u.owners.length),
    ...u.owners.map((o) => Buffer.from(shortId(o))),
  ]);
  return { hex: withChecksum(bytes), key: cb58Encode(createHash('sha256').update(bytes).digest()) };
}
