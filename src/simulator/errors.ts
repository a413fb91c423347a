// Error bodies of the two services (docs/services.md, Data service and Metrics service): the data
// service sends `message` as a string, the metrics service as an array of strings. The node's
// HTTP errors take the data shape; its JSON-RPC errors (RpcFault) are answers, in the JSON-RPC
// envelope.

export type Service = 'data' | 'metrics' | 'node';

export const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

export interface ErrorBody {
  message: string | string[];
  error: string;
  statusCode: number;
}

export class HttpError extends Error {
  readonly messages: string[];
  constructor(readonly status: number, message: string | string[]) {
    const messages = Array.isArray(message) ? message : [message];
    super(messages.join('; '));
    this.messages = messages;
  }
}

/**
 * An answer whose status the handler decides (a node's health: 200, or 503 when unhealthy); with
 * `type`, the body is text of that content type (a node's 415 is plain text).
 */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly type?: string,
  ) {}
}

/** A JSON-RPC error the node answers with (code and message), in the standard envelope. */
export class RpcFault extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** A parameter the method cannot read (a node's own APIs answer all of these -32000 with one message). */
export const invalidParams = (message: string) => new RpcFault(-32602, message);
export const serverError = (message: string) => new RpcFault(-32000, message);
export const notAvailable = (method: string) => new RpcFault(-32601, `the method ${method} does not exist/is not available`);

export function badRequest(message: string): HttpError {
  return new HttpError(400, message);
}

export function notFound(message: string): HttpError {
  return new HttpError(404, message);
}

export function errorBody(service: Service, status: number, message: string | string[]): ErrorBody {
  const messages = Array.isArray(message) ? message : [message];
  return {
    message: service === 'metrics' ? messages : messages.join('; '),
    error: STATUS_TEXT[status] ?? 'Error',
    statusCode: status,
  };
}
