import { createHash } from 'node:crypto';
import { bech32 } from '@scure/base';
import { cb58Encode } from '../ids.js';
import { RunError } from '../errors.js';
import type { Page } from '../decl/request.js';
import type { Column, ExtractContext, StreamDecl } from '../decl/stream.js';
import { NODE_SNAPSHOT, NODE_SNAPSHOT_COLUMNS, SNAPSHOT_KEY_DOC, blockchainIdOf, fields, nodeSnapshot, ofChain, stamped } from './node_reads.js';
import { CHAIN_COLUMN, assetCall } from './xvm_reads.js';

type Item = Record<string, unknown>;

/** The most UTXOs getUTXOs returns at once (a larger or missing limit becomes this). */
export const UTXO_LIMIT = 1024;

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest();

/** The bytes of a node's hex encoding: 0x, the payload, then the last 4 bytes of its sha256. */
export function hexPayload(s: string): Uint8Array | string {
  if (!/^0x([0-9a-fA-F]{2})+$/.test(s)) return 'is not 0x-prefixed hex';
  const all = Buffer.from(s.slice(2), 'hex');
  if (all.length < 5) return 'is too short to hold a checksum';
  const payload = all.subarray(0, all.length - 4);
  return sha256(payload).subarray(28).equals(all.subarray(all.length - 4)) ? payload : 'has a bad checksum';
}

/** What the codec (version 0) gives of a UTXO; NULL fields it does not reach (another output type, truncated bytes). */
interface Utxo {
  txId?: string;
  outputIndex?: number;
  assetId?: string;
  typeId?: number;
  amount?: string;
  locktime?: string;
  threshold?: number;
  addresses?: string[];
}

/** secp256k1fx output types of the asset chain's codec. */
const MINT_OUTPUT = 6;
const TRANSFER_OUTPUT = 7;

function parseUtxo(b: Buffer, address: (bytes: Uint8Array) => string): Utxo {
  const u: Utxo = {};
  let o = 2; // codec version
  const need = (n: number) => o + n <= b.length;
  if (!need(32 + 4 + 32 + 4)) return u;
  u.txId = cb58Encode(b.subarray(o, (o += 32)));
  u.outputIndex = b.readUInt32BE(o);
  o += 4;
  u.assetId = cb58Encode(b.subarray(o, (o += 32)));
  u.typeId = b.readUInt32BE(o);
  o += 4;
  if (u.typeId !== TRANSFER_OUTPUT && u.typeId !== MINT_OUTPUT) return u;
  if (u.typeId === TRANSFER_OUTPUT) {
    if (!need(8)) return u;
    u.amount = b.readBigUInt64BE(o).toString();
    o += 8;
  }
  if (!need(8 + 4 + 4)) return u;
  u.locktime = b.readBigUInt64BE(o).toString();
  u.threshold = b.readUInt32BE(o + 8);
  const n = b.readUInt32BE(o + 12);
  o += 16;
  if (!need(20 * n)) return u;
  u.addresses = Array.from({ length: n }, (_, k) => address(b.subarray(o + 20 * k, o + 20 * (k + 1))));
  return u;
}

const decodedItems = new WeakMap<Item, { id: string; utxo: Utxo } | string>();

/** The UTXO of an item, decoded once for all its columns, or why its bytes are not one. */
function decoded(i: Item): { id: string; utxo: Utxo } | string {
  let d = decodedItems.get(i);
  if (d === undefined) {
    const bytes = typeof i.utxo === 'string' ? hexPayload(i.utxo) : 'is not a string';
    const fmt = (i._addresses ?? {}) as { chain?: string; hrp?: string };
    d =
      typeof bytes === 'string'
        ? bytes
        : { id: sha256(bytes).toString('hex'), utxo: parseUtxo(Buffer.from(bytes), (a) => `${fmt.chain ?? 'X'}-${bech32.encode(fmt.hrp ?? 'avax', bech32.toWords(a))}`) };
    decodedItems.set(i, d);
  }
  return d;
}

function field<K extends keyof Utxo>(k: K): (i: Item) => unknown {
  return (i) => {
    const d = decoded(i);
    return typeof d === 'string' ? undefined : d.utxo[k];
  };
}

/** Chain letter and bech32 prefix that addresses in the UTXOs are written with: those of the listed ones. */
function addressFormat(address: string): { chain: string; hrp: string } {
  const m = /^(?:([PXC])-)?([a-z]+)1/.exec(address.toLowerCase());
  return { chain: m?.[1]?.toUpperCase() ?? 'X', hrp: m?.[2] ?? 'avax' };
}

/**
 * Pages with endIndex -> startIndex until a page holds fewer than `limit`. The node may list a
 * UTXO more than once (under each listed address it names, and across pages), so each is kept
 * once, by its bytes. An endIndex that does not move would page forever: that is an error.
 */
async function* utxoPages(x: ExtractContext): AsyncGenerator<Page> {
  const snap = nodeSnapshot(x);
  const chain = x.partition.path.chain!;
  const addresses = x.config.addresses as string[];
  const sourceChain = x.config.sourceChain as string | undefined;
  const limit = Number(x.query.pageSize ?? UTXO_LIMIT);
  const id = await blockchainIdOf(x, chain);
  const format = addressFormat(addresses[0]!);
  const seen = new Set<string>();
  let startIndex: unknown;
  let last: string | undefined;
  for (;;) {
    const params = { addresses, limit, encoding: 'hex', ...(startIndex === undefined ? {} : { startIndex }), ...(sourceChain ? { sourceChain } : {}) };
    const r = fields(await assetCall(x, chain, 'getUTXOs', params), 'getUTXOs');
    if (!Array.isArray(r.utxos)) throw new RunError('getUTXOs: the answer has no utxos list');
    const fresh = r.utxos.filter((u) => {
      if (typeof u !== 'string') return true;
      const k = u.toLowerCase();
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
    yield { items: stamped(ofChain(fresh.map((utxo) => ({ utxo, sourceChain, _addresses: format })), id), snap) };
    const fetched = r.numFetched === undefined ? r.utxos.length : Number(r.numFetched);
    if (!(fetched >= limit)) break;
    const end = JSON.stringify(r.endIndex);
    if (r.endIndex === undefined || end === last) throw new RunError(`getUTXOs: a full page (${fetched}) whose endIndex ${end ?? 'is missing'}${end === last ? ' did not move' : ''}: paging would not end`);
    last = end;
    startIndex = r.endIndex;
  }
}

const UTXO_COLUMNS: Column[] = [
  { name: 'utxo_id', type: 'varchar', required: true, derive: (i) => {
    const d = decoded(i);
    // An object is not text: the reject then says why the bytes are not a UTXO.
    return typeof d === 'string' ? { notAUtxo: `the utxo ${d}` } : d.id;
  }, doc: 'sha256 of the UTXO bytes (hex): stable, whatever page or address listed it' },
  { name: 'utxo', type: 'varchar', from: 'utxo', required: true, doc: 'the UTXO as sent (hex with its checksum)' },
  { name: 'tx_id', type: 'varchar', derive: field('txId'), doc: 'transaction that made it' },
  { name: 'output_index', type: 'bigint', derive: field('outputIndex'), doc: 'its output index in that transaction' },
  { name: 'asset_id', type: 'varchar', derive: field('assetId'), doc: 'asset' },
  { name: 'type_id', type: 'integer', derive: field('typeId'), doc: 'output type (7 a transfer output, 6 a mint output; others leave the columns below NULL)' },
  { name: 'amount', type: 'amount', derive: field('amount'), doc: "amount (uint64, the asset's smallest unit)" },
  { name: 'locktime', type: 'ubigint', derive: field('locktime'), doc: 'Unix time before which it cannot be spent' },
  { name: 'threshold', type: 'integer', derive: field('threshold'), doc: 'signatures of the addresses needed to spend it' },
  { name: 'addresses', type: 'varchar[]', derive: field('addresses'), doc: 'owners (written like the listed addresses: X-avax1...)' },
];

export const utxos: StreamDecl = {
  table: 'utxos',
  doc: 'the UTXOs of listed addresses on the asset chain (avm.getUTXOs, paged, each UTXO once), decoded, one row per UTXO per snapshot',
  ...NODE_SNAPSHOT,
  endpoint: '/ext/bc/{chain}',
  methods: ['avm.getUTXOs'],
  items: 'utxos',
  extract: utxoPages,
  pageSize: { min: 1, max: UTXO_LIMIT, default: UTXO_LIMIT, note: 'the node returns at most 1024 a call' },
  options: {
    addresses: { kind: 'x_address[]', required: true, doc: 'owners (X-avax1...), asked together' },
    blockchainIds: { kind: 'blockchain_id[]', doc: 'asset chains: X (default) or ids of chains running the same VM; one partition each' },
    sourceChain: { kind: 'blockchain_id', doc: "atomic UTXOs exported to this chain from that one (P, C or an id) instead of the chain's own" },
  },
  partitions: (s) =>
    ((s.blockchainIds as string[] | undefined) ?? ['X']).map((chain) => {
      const id = [chain, s.sourceChain === undefined ? '' : `from-${String(s.sourceChain)}`, ...(s.addresses as string[])].filter(Boolean).join('/');
      return { id, path: { chain }, query: {}, values: {} };
    }),
  key: ['node_url', 'snapshot_at', 'blockchain_id', 'utxo_id'],
  keyDoc: `${SNAPSHOT_KEY_DOC}; a spent UTXO is in the snapshots before it was spent only`,
  knownFields: ['_addresses', 'sourceChain'],
  columns: [
    ...NODE_SNAPSHOT_COLUMNS,
    CHAIN_COLUMN,
    { name: 'source_chain', type: 'varchar', from: 'sourceChain', doc: 'atomic UTXOs: the chain they were exported from' },
    ...UTXO_COLUMNS,
  ],
};
