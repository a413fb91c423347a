import type { Page } from '../decl/request.js';
import type { StreamDecl } from '../decl/stream.js';
import { nodeIdProblem } from '../ids.js';
import { NETWORK_COLUMN, queryPartition } from './common.js';
import { idCheck, SNAPSHOT_AT, snapshotListing } from './validators.js';

/** The page's `blockHeight` (the P-Chain height its balances are of), read off the body as sent. */
function blockHeight(page: Page): Record<string, unknown> {
  if (!page.raw) return {};
  const body = JSON.parse(page.raw.toString('utf8')) as Record<string, unknown> | null;
  return body && typeof body === 'object' ? { blockHeight: body.blockHeight } : {};
}

export const l1Validators: StreamDecl = {
  table: 'l1_validators',
  doc: 'snapshots of the L1 validators (weight, remaining balance, owners), one row per validator per run',
  service: 'data',
  endpoint: '/v1/networks/{network}/l1Validators',
  items: 'validators',
  extract: (x) => snapshotListing(x, blockHeight),
  weight: 20,
  // weight and remainingBalance are JSON numbers that may pass 2^53 (uint64 on the P-Chain).
  exactNumbers: ['weight', 'remainingBalance'],
  pageSize: { min: 1, max: 100, default: 100 },
  options: {
    network: { kind: 'network', required: true, doc: 'mainnet, fuji or testnet' },
    subnetId: { kind: 'string', doc: 'only the validators of this L1 (its subnet id, cb58)' },
    nodeId: { kind: 'string', doc: 'only this node (NodeID-...)' },
    l1ValidationId: { kind: 'string', doc: 'only this validation (cb58)' },
    includeInactiveL1Validators: { kind: 'boolean', doc: 'also validators whose balance ran out (default false: the service lists active ones)' },
  },
  check: (s) => {
    const out = idCheck(s, 'subnetId', 'l1ValidationId');
    const problem = s.nodeId === undefined ? null : nodeIdProblem(s.nodeId);
    if (problem) out.push(['nodeId', `${JSON.stringify(s.nodeId)} is not a NodeID (NodeID- + cb58 of 20 bytes): it ${problem}`]);
    return out;
  },
  partitions: (s) => [
    queryPartition(String(s.network), {
      subnetId: s.subnetId as string | undefined,
      nodeId: s.nodeId as string | undefined,
      l1ValidationId: s.l1ValidationId as string | undefined,
      includeInactiveL1Validators: s.includeInactiveL1Validators === undefined ? undefined : String(s.includeInactiveL1Validators),
    }),
  ],
  refresh: 'merge',
  // Entries whose filters overlap list the same validation: one row per snapshot whichever listed it.
  mergeScope: 'table',
  key: ['network', 'snapshot_at', 'validation_id'],
  keyDoc: 'a row is one L1 validation in one snapshot: each run adds a snapshot (a run within the same second replaces it)',
  columns: [
    NETWORK_COLUMN,
    SNAPSHOT_AT,
    { name: 'block_height', type: 'bigint', from: '_snapshot.blockHeight', required: true, doc: 'P-Chain height the remaining balances are of (the answer\'s blockHeight)' },
    { name: 'validation_id', type: 'varchar', from: 'validationId', required: true, doc: 'L1 validation id (cb58), valid until the weight drops to 0' },
    { name: 'validation_id_hex', type: 'varchar', from: 'validationIdHex', doc: 'the same id in hex' },
    { name: 'node_id', type: 'varchar', from: 'nodeId', required: true, doc: 'validator NodeID' },
    { name: 'subnet_id', type: 'varchar', from: 'subnetId', required: true, doc: 'the L1 (its subnet id)' },
    { name: 'weight', type: 'amount', from: 'weight', required: true, doc: 'sampling weight (uint64, a JSON number kept exact); 0: removed' },
    { name: 'remaining_balance', type: 'amount', from: 'remainingBalance', required: true, units: 9, doc: 'balance left for continuous fees, nAVAX (a JSON number kept exact); 0: inactive' },
    { name: 'creation_timestamp', type: 'timestamptz', from: 'creationTimestamp', required: true, doc: 'when the validator was created' },
    { name: 'bls_public_key', type: 'varchar', from: 'blsCredentials.publicKey', doc: 'BLS public key (hex)' },
    { name: 'bls_proof_of_possession', type: 'varchar', from: 'blsCredentials.proofOfPossession', doc: 'BLS proof of possession (hex)' },
    { name: 'bls_credentials', type: 'json', from: 'blsCredentials', doc: 'blsCredentials whole (the published schema leaves the object open)' },
    { name: 'remaining_balance_owner_addresses', type: 'varchar[]', from: 'remainingBalanceOwner.addresses', doc: 'who gets the remaining balance when the validator is disabled or removed' },
    { name: 'remaining_balance_owner_threshold', type: 'integer', from: 'remainingBalanceOwner.threshold', doc: 'signatures needed of them' },
    { name: 'deactivation_owner_addresses', type: 'varchar[]', from: 'deactivationOwner.addresses', doc: 'who may disable or remove the validator' },
    { name: 'deactivation_owner_threshold', type: 'integer', from: 'deactivationOwner.threshold', doc: 'signatures needed of them' },
  ],
};
