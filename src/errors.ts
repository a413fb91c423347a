// Exit codes are a contract (README "Exit codes", `chainlake --help`): each outcome a script may
// act on differently has its own.

export const EXIT = {
  /** Done. */
  ok: 0,
  /** A run failed part way (committed work stays and a rerun resumes), or a check failed. */
  failed: 1,
  /** Bad usage or configuration: nothing written. */
  usage: 2,
  /** The lake is held by another writer (without --wait): rerun when it is done. */
  lakeInUse: 3,
  /** A service refused a request for good (400, 401, 403, 404, a redirect away): rerunning alone fails the same. */
  refused: 4,
  /** Stopped by SIGINT or SIGTERM at a safe point: 128 + the signal's number, as shells report it. */
  SIGINT: 130,
  SIGTERM: 143,
} as const;

/** Bad usage or configuration: exit 2, nothing written. */
export class UsageError extends Error {
  readonly exitCode = EXIT.usage;
}

/** A run that failed part way: exit 1 (or the code given); committed work stays and a rerun resumes. */
export class RunError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
  ) {
    super(message);
  }
}

/** A command stopped by a signal at a safe point: exit 130 (SIGINT) or 143 (SIGTERM). */
export class Interrupted extends RunError {
  constructor(
    readonly signal: 'SIGINT' | 'SIGTERM',
    message = `stopped by ${signal}`,
  ) {
    super(message, EXIT[signal]);
  }
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

  /**
   * The service refused the request itself (a 4xx other than a timeout or a rate limit, or a
   * redirect chainlake does not follow): sent again, it is refused again.
   */
  get permanent(): boolean {
    return !this.retryable && this.status !== undefined && this.status >= 300 && this.status < 500 && this.status !== 408 && this.status !== 429;
  }
}

/**
 * A partition the source does not serve (a node without the admin API): nothing to land and no
 * failure. The run goes on and its report says why.
 */
export class Skipped extends Error {}
