/**
 * Every failure the service reports on purpose is a ServiceError with a stable code, raised where the fault
 * is known (a driver error in src/db, a provider failure in src/embeddings, a refused input in src/memory or
 * src/tools). Codes are mapped to the wire once per layer (src/mcp/tool.ts for tools).
 */
export type ErrorCode = 'INVALID_INPUT' | 'SECRET_REJECTED' | 'QUOTA_EXCEEDED' | 'EMBEDDING_ERROR' | 'DATABASE_ERROR' | 'NOT_FOUND' | 'FORBIDDEN';

export class ServiceError extends Error {
  readonly code: ErrorCode;
  /**
   * The input the error is about, in the terms of the code that raised it ('text', 'note'), when it is about
   * one: the message then reads as a predicate of it ("looks like a secret ..."), and the tools put the
   * argument's own name in front.
   */
  readonly field: string | undefined;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; field?: string } = {}) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.field = options.field;
  }
}

export const invalidInput = (message: string): ServiceError => new ServiceError('INVALID_INPUT', message);

/** The message never repeats the text: the whole point is not to echo a secret back. */
export const secretRejected = (field: string): ServiceError =>
  new ServiceError('SECRET_REJECTED', 'looks like a secret (API key, token, password or private key) and was not stored; remove the secret and try again', {
    field,
  });

export const quotaExceeded = (message: string): ServiceError => new ServiceError('QUOTA_EXCEEDED', message);

export const embeddingError = (message: string, cause?: unknown): ServiceError => new ServiceError('EMBEDDING_ERROR', message, { cause });

export const databaseError = (message: string, cause?: unknown): ServiceError => new ServiceError('DATABASE_ERROR', message, { cause });

export const notFound = (what: string): ServiceError => new ServiceError('NOT_FOUND', `${what} not found`);

/** Known and visible to the caller, but not theirs to change (a reader's write, a member managing a space). */
export const forbidden = (message: string): ServiceError => new ServiceError('FORBIDDEN', message);

export const isServiceError = (value: unknown): value is ServiceError => value instanceof ServiceError;
