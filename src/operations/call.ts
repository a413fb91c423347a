// What the export and signature commands share about calling the data service.
import { RunError, ServiceError } from '../errors.js';
import { newRequestStats } from '../decl/request.js';

/** Counters the client keeps; these commands print no run report, so nothing reads them. */
export const stats = newRequestStats();

/** A service error is the command's failure (exit 1), with the service's own message. */
export async function call<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    if (err instanceof ServiceError) throw new RunError(err.message);
    throw err;
  }
}
