// The signature aggregator (docs/services.md, Export operations and signatures): one POST, tried once (it
// asks validators to sign), answered with the signed warp message as hex.
import type { Network } from '../ids.js';
import type { SignatureRequest } from '../requests.js';
import { RunError } from '../errors.js';
import type { Client } from '../sources/client.js';
import { call, stats } from './call.js';

const ENDPOINT = '/v1/signatureAggregator/{network}/aggregateSignatures';

export async function aggregateSignatures(client: Pick<Client, 'post'>, network: Network, request: SignatureRequest, signal?: AbortSignal): Promise<string> {
  const path = ENDPOINT.replace('{network}', network);
  const body = (await call(() => client.post(path, request, { idempotent: false, endpoint: ENDPOINT, stats, weight: 20, ...(signal ? { signal } : {}) }))) as { signedMessage?: unknown } | null;
  const signed = body?.signedMessage;
  if (typeof signed !== 'string' || !/^(0x)?([0-9a-fA-F]{2})+$/.test(signed))
    throw new RunError(`POST ${path}: the answer has no signedMessage in hex: ${JSON.stringify(body).slice(0, 200)}`);
  return signed;
}
