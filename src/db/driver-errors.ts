/**
 * Which thrown values are the database's fault: errors the server reported (they carry a five-character
 * SQLSTATE `code`, on pg and PGlite alike) and failures to reach it or keep talking to it. Everything else
 * thrown inside a transaction (a RangeError in ranking code, a TypeError) is a bug of ours, not a database
 * failure, and must not be reported as one.
 */
const SQLSTATE = /^[0-9A-Z]{5}$/;

/** Socket errors of a connection that could not be made or was lost. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** What pg, pg-pool and PGlite throw, with no code, when the connection is gone or cannot be had. */
const CONNECTION_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end on the pool|Query read timeout|PGlite is clos(ed|ing)|the embedded database is unavailable)/;

export interface DriverErrorInfo {
  /** The driver's message: no parameters (pg keeps those in other fields, which are never read here). */
  readonly message: string;
  /** The SQLSTATE or socket error code, when there is one. */
  readonly code: string | undefined;
}

/** The message and code of a driver error, or undefined when `error` is not one. */
export function driverError(error: unknown): DriverErrorInfo | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (SQLSTATE.test(code) || CONNECTION_CODES.has(code))) return { message: error.message, code };
  if (CONNECTION_MESSAGES.test(error.message)) return { message: error.message, code: undefined };
  return undefined;
}
