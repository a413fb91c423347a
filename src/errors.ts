// Exit codes are a contract (README "CLI"): 0 done, 1 run failed (rerun resumes), 2 bad usage or config.

/** Bad usage or configuration: exit 2, nothing written. */
export class UsageError extends Error {
  readonly exitCode = 2;
}

/** A run that failed part way: exit 1; committed work stays and a rerun resumes. */
export class RunError extends Error {
  readonly exitCode = 1;
}

/** An HTTP answer the client must not retry, or retries that ran out. */
export class ServiceError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly endpoint: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

/**
 * A partition the source does not serve (a node without the admin API): nothing to land and no
 * failure. The run goes on and its report says why.
 */
export class Skipped extends Error {}
