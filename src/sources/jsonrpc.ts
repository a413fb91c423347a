// JSON-RPC 2.0 over the client (docs/services.md, Node JSON-RPC): one POST per call; a JSON-RPC error object is
// the node's answer, not a transport fault, so it is not retried and is quoted in the message.
// Answers are parsed keeping every number's digits: the node writes uint64 fields as JSON numbers.
import { ServiceError } from '../errors.js';
import { bounded } from '../text.js';
import { onBehalf, type ClientPort, type RequestContext } from '../decl/request.js';

let nextId = 1;

/** The node answered with a JSON-RPC error object: `code` and `rpcMessage` as the node sent them. */
export class RpcError extends ServiceError {
  constructor(
    message: string,
    endpoint: string,
    readonly code: number | undefined,
    readonly rpcMessage: string,
  ) {
    super(message, undefined, endpoint, false);
  }
}

/**
 * The node has no such method or API: JSON-RPC's -32601 (the EVM chains), or, from the node's own
 * APIs, -32000 with `rpc: can't find service "xvm.GetHeight"` (or `can't find method`).
 */
export function isMissingMethod(err: unknown): err is RpcError {
  return err instanceof RpcError && (err.code === -32601 || (err.code === -32000 && /^rpc: can't find (service|method) /.test(err.rpcMessage)));
}

/** Calls `method` at `path` (e.g. /ext/info) on behalf of `x`'s partition and returns its `result`; a call costs one unit. */
export async function rpc(client: Pick<ClientPort, 'post'>, path: string, method: string, params: unknown, x: Pick<RequestContext, 'stats' | 'signal' | 'flow'>): Promise<unknown> {
  const id = nextId++;
  const body = (await client.post(path, { jsonrpc: '2.0', id, method, params }, { ...onBehalf(x, `${path} ${method}`), exact: true, idempotent: true })) as Record<string, unknown> | null;
  if (!body || typeof body !== 'object') throw new ServiceError(`POST ${path} ${method}: the answer is not a JSON-RPC object`, undefined, `${path} ${method}`, false);
  const err = body.error as { code?: unknown; message?: unknown; data?: unknown } | undefined | null;
  if (err) {
    // The node's own APIs send `data: null` with every error.
    const data = err.data === undefined || err.data === null ? '' : ` (${bounded(JSON.stringify(err.data), 200)})`;
    const code = typeof err.code === 'number' ? err.code : undefined;
    throw new RpcError(`POST ${path} ${method}: JSON-RPC error ${bounded(String(err.code), 40)}: ${bounded(String(err.message))}${data}`, `${path} ${method}`, code, String(err.message));
  }
  if (!('result' in body)) throw new ServiceError(`POST ${path} ${method}: the answer has neither result nor error`, undefined, `${path} ${method}`, false);
  return body.result;
}
