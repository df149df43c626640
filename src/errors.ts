/**
 * Every failure the service reports on purpose is a ServiceError with a stable code.
 * Codes are mapped to the wire in one place per layer (src/mcp/tool-result.ts for tools).
 */
export type ErrorCode =
  | 'INVALID_INPUT'
  | 'SECRET_REJECTED'
  | 'EMBEDDING_ERROR'
  | 'DATABASE_ERROR'
  | 'NOT_FOUND'
  | 'CONFIG_INVALID';

export class ServiceError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ServiceError';
    this.code = code;
  }
}

export const invalidInput = (message: string): ServiceError => new ServiceError('INVALID_INPUT', message);

export const secretRejected = (argument = 'text'): ServiceError =>
  // The message never repeats the text: the whole point is not to echo a secret back.
  new ServiceError(
    'SECRET_REJECTED',
    `${argument} looks like a secret (API key, token, password or private key) and was not stored; remove the secret and try again`,
  );

export const embeddingError = (message: string, cause?: unknown): ServiceError =>
  new ServiceError('EMBEDDING_ERROR', message, { cause });

export const databaseError = (message: string, cause?: unknown): ServiceError =>
  new ServiceError('DATABASE_ERROR', message, { cause });

export const notFound = (what: string): ServiceError => new ServiceError('NOT_FOUND', `${what} not found`);

export const isServiceError = (value: unknown): value is ServiceError => value instanceof ServiceError;
