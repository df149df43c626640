import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

/** What the dialect needs of PGlite: a real PGlite, or the re-opening engine of open-database.ts. */
export type PGliteQueryable = Pick<PGlite, 'query'>;

/**
 * Kysely over PGlite. PGlite has one connection, so transactions are serialised: a second acquire waits until
 * the first connection is released. Closing the PGlite is its owner's business, never Kysely's.
 */
export class PGliteDialect implements Dialect {
  readonly #pglite: PGliteQueryable;

  constructor(pglite: PGliteQueryable) {
    this.#pglite = pglite;
  }

  createAdapter() {
    return new PostgresAdapter();
  }

  createDriver(): Driver {
    return new PGliteDriver(this.#pglite);
  }

  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }

  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
}

class PGliteDriver implements Driver {
  readonly #connection: PGliteConnection;
  /** Resolves when the connection is free; each acquirer chains on the previous one. */
  #free: Promise<void> = Promise.resolve();
  #release: (() => void) | undefined;

  constructor(pglite: PGliteQueryable) {
    this.#connection = new PGliteConnection(pglite);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const previous = this.#free;
    let release!: () => void;
    this.#free = new Promise((resolve) => (release = resolve));
    await previous;
    this.#release = release;
    return this.#connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    // Kysely has validated the access mode ('read only' or 'read write').
    await connection.executeQuery(CompiledQuery.raw(settings.accessMode === undefined ? 'begin' : `start transaction ${settings.accessMode}`));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(): Promise<void> {
    const release = this.#release;
    this.#release = undefined;
    release?.();
  }

  async destroy(): Promise<void> {}
}

class PGliteConnection implements DatabaseConnection {
  readonly #pglite: PGliteQueryable;

  constructor(pglite: PGliteQueryable) {
    this.#pglite = pglite;
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const { rows, affectedRows } = await this.#pglite.query<R>(compiled.sql, [...compiled.parameters]);
    return affectedRows ? { rows, numAffectedRows: BigInt(affectedRows) } : { rows };
  }

  async *streamQuery<R>(compiled: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    const { rows } = await this.executeQuery<R>(compiled);
    for (let start = 0; start < rows.length; start += chunkSize) yield { rows: rows.slice(start, start + chunkSize) };
  }
}
