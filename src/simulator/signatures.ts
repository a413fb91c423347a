// The signature aggregator (POST /v1/signatureAggregator/{network}/aggregateSignatures): checks the
// body by the rules chainlake checks it by (src/requests.ts) and answers a signed warp message
// laid out as the OpenAPI's example is: the unsigned message, signature type 0, a length-prefixed
// bitset of the signers and a 96-byte aggregate signature. Ten validators of equal weight sign,
// as many as quorum + buffer need; the signature is a hash, the same for the same request.
import { createHash } from 'node:crypto';
import { signatureRequestProblems, type SignatureRequest } from '../requests.js';
import { badRequest } from './errors.js';

const VALIDATORS = 10;

function uint32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

function hexBytes(s: string): Buffer {
  return Buffer.from(s.replace(/^0x/, ''), 'hex');
}

function parseBody(body: unknown): SignatureRequest {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the body must be a JSON object');
  const b = body as Record<string, unknown>;
  for (const f of ['message', 'justification', 'signingSubnetId']) if (b[f] !== undefined && typeof b[f] !== 'string') throw badRequest(`${f} must be a string`);
  for (const f of ['quorumPercentage', 'quorumPercentageBuffer', 'pChainHeight']) if (b[f] !== undefined && typeof b[f] !== 'number') throw badRequest(`${f} must be a number`);
  return b as SignatureRequest;
}

export function aggregateSignatures(seed: number, network: string, body: unknown): unknown {
  const r = parseBody(body);
  const problems = signatureRequestProblems(r);
  if (problems.length) throw badRequest(problems.map(([f, m]) => `${f}: ${m}`).join('; '));
  // A justification alone stands for a message the aggregator rebuilds from it.
  const unsigned = r.message !== undefined ? hexBytes(r.message) : createHash('sha256').update('justified:').update(hexBytes(r.justification!)).digest();
  const signers = Math.min(VALIDATORS, Math.ceil(((r.quorumPercentage ?? 67) + (r.quorumPercentageBuffer ?? 0)) / (100 / VALIDATORS)));
  const bits = (1n << BigInt(signers)) - 1n;
  const bitset = Buffer.from(bits.toString(16).padStart(4, '0'), 'hex');
  const key = JSON.stringify([seed, network, unsigned.toString('hex'), r.justification ?? null, r.signingSubnetId ?? null, r.quorumPercentage ?? 67, r.quorumPercentageBuffer ?? 0, r.pChainHeight ?? 0]);
  const signature = Buffer.concat([0, 1, 2].map((i) => createHash('sha256').update(`${i}:${key}`).digest())).subarray(0, 96);
  return { signedMessage: Buffer.concat([unsigned, uint32(0), uint32(bitset.length), bitset, signature]).toString('hex') };
}
