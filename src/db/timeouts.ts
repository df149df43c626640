/** PostgreSQL: how long to wait for a connection, new or from the pool (DatabaseConnectTimeoutMs). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/**
 * PostgreSQL: the longest statement of a request's transaction (DatabaseStatementTimeoutMs). A recall over a
 * subject of 100k memories takes well under a second; this only ends statements that are stuck.
 */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 15_000;
