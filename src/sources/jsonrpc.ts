// JSON-RPC 2.0 over the client (docs/services.md, Node JSON-RPC): one POST per call; a JSON-RPC error object is
// the node's answer, not a transport fault, so it is not retried and is quoted in the message.
import { ServiceError } from '../errors.js';
import { onBehalf, type ClientPort, type RequestContext } from '../decl/request.js';

let nextId = 1;

/** The node answered with a JSON-RPC error object: `code` tells a missing method from bad params. */
export class RpcError extends ServiceError {
  constructor(
    message: string,
    endpoint: string,
    readonly code: number | undefined,
  ) {
    super(message, undefined, endpoint, false);
  }
}

/** Calls `method` at `path` (e.g. /ext/info) on behalf of `x`'s partition and returns its `result`; a call costs one unit. */
export async function rpc(client: Pick<ClientPort, 'post'>, path: string, method: string, params: unknown, x: Pick<RequestContext, 'stats' | 'signal' | 'flow'>): Promise<unknown> {
  const id = nextId++;
  const body = (await client.post(path, { jsonrpc: '2.0', id, method, params }, { ...onBehalf(x, `${path} ${method}`), idempotent: true })) as Record<string, unknown> | null;
  if (!body || typeof body !== 'object') throw new ServiceError(`POST ${path} ${method}: the answer is not a JSON-RPC object`, undefined, `${path} ${method}`, false);
  const err = body.error as { code?: unknown; message?: unknown; data?: unknown } | undefined;
  if (err) {
    const data = err.data === undefined ? '' : ` (${JSON.stringify(err.data).slice(0, 200)})`;
    throw new RpcError(`POST ${path} ${method}: JSON-RPC error ${String(err.code)}: ${String(err.message)}${data}`, `${path} ${method}`, typeof err.code === 'number' ? err.code : undefined);
  }
  if (!('result' in body)) throw new ServiceError(`POST ${path} ${method}: the answer has neither result nor error`, undefined, `${path} ${method}`, false);
  return body.result;
}
