import type { PGlite } from '@electric-sql/pglite';
import type { Config } from './config/load-config.js';
import { openDatabase, type DatabaseHandle } from './db/open-database.js';
import { databaseError, isServiceError } from './errors.js';
import { createEmbeddingProvider } from './embeddings/create-provider.js';
import type { EmbeddingProvider } from './embeddings/provider.js';
import type { Logger } from './logger.js';

export interface Storage {
  readonly embedder: EmbeddingProvider;
  readonly db: DatabaseHandle;
  /** Closes the database, then the embedder. */
  close(): Promise<void>;
}

export interface OpenStorageOptions {
  /** Instead of the configured provider (compose passes it instrumented; tests pass one at a network edge). */
  readonly embedder?: EmbeddingProvider | undefined;
  /** An already open PGlite owned by the caller (tests share one per file). */
  readonly pglite?: PGlite | undefined;
  readonly logger?: Logger | undefined;
  /**
   * Whether to make the embedder ready (load the local model, probe the server) before opening the database.
   * `migrate` passes false: a known model's dimension is all the database needs; an unknown one is asked anyway.
   */
  readonly warmUp?: boolean;
}

/**
 * The embedder and the database: the database's vector index is made for the embedder's dimension, which an
 * OpenAI-compatible server may have to be asked for first. When the dimension is known, both open at once: the
 * model loads (seconds) while the migrations run, and a database that cannot open (a locked data folder, a
 * server that refuses) is reported without waiting for the model. Migrations run as the database opens.
 */
export async function openStorage(config: Config, options: OpenStorageOptions = {}): Promise<Storage> {
  const embedder = options.embedder ?? createEmbeddingProvider(config.embedding, options.logger);
  const open = (): Promise<DatabaseHandle> =>
    openDatabase({
      ...config.database,
      embeddingDimensions: embedder.dimensions,
      pglite: options.pglite,
      onDriverError: (failure, activity) => options.logger?.error({ err: failure, activity }, 'database error'),
      onEngineEvent: (event, detail) =>
        event === 'lost'
          ? options.logger?.error({ reason: detail }, 'embedded database lost; it is reopened on the next statement')
          : options.logger?.warn({ dataDir: detail }, 'embedded database reopened'),
    }).catch((error: unknown) => {
      throw connectionFailure(error, config.database.url);
    });
  let opening: Promise<DatabaseHandle> | undefined;
  try {
    if (embedder.dimensions === 0) await embedder.ready();
    opening = open();
    await Promise.all([opening, options.warmUp === false ? undefined : embedder.ready()]);
  } catch (error) {
    // The first failure ends the start: the model's workers stop loading, and a database that did open closes.
    await embedder.close();
    await opening?.then((db) => db.close(), () => undefined);
    throw error;
  }
  const db = await opening;
  return {
    embedder,
    db,
    async close() {
      await db.close();
      await embedder.close();
    },
  };
}

/** Why PostgreSQL could not be used, by the driver's error code: what to check or change. */
const CONNECTION_PROBLEMS: Record<string, string> = {
  ECONNREFUSED: 'nothing listens there; start PostgreSQL, or correct the host and port in DatabaseUrl (MEMORY_SERVICE_DATABASE_URL)',
  ENOTFOUND: 'that host name does not resolve; correct DatabaseUrl (MEMORY_SERVICE_DATABASE_URL)',
  EAI_AGAIN: 'that host name does not resolve; correct DatabaseUrl (MEMORY_SERVICE_DATABASE_URL)',
  EHOSTUNREACH: 'that host cannot be reached; check the network, or correct DatabaseUrl (MEMORY_SERVICE_DATABASE_URL)',
  ENETUNREACH: 'that host cannot be reached; check the network, or correct DatabaseUrl (MEMORY_SERVICE_DATABASE_URL)',
  ETIMEDOUT: 'it did not answer; check the network, or correct DatabaseUrl (MEMORY_SERVICE_DATABASE_URL)',
  '28P01': 'it refused the password; correct the user and password in DatabaseUrl (MEMORY_SERVICE_DATABASE_URL)',
  '28000': 'it refused the login (pg_hba.conf); allow this client there, or correct DatabaseUrl (MEMORY_SERVICE_DATABASE_URL)',
  '3D000': 'that database does not exist; create it (createdb), or correct the database name in DatabaseUrl (MEMORY_SERVICE_DATABASE_URL)',
};

/** A PostgreSQL server out of reach, or refusing the login, as a DATABASE_ERROR an operator can act on. */
function connectionFailure(error: unknown, url: string | undefined): unknown {
  if (url === undefined || isServiceError(error)) return error;
  const code = (error as { code?: unknown }).code;
  const timedOut = error instanceof Error && /timeout/i.test(error.message);
  const problem = typeof code === 'string' ? CONNECTION_PROBLEMS[code] : timedOut ? CONNECTION_PROBLEMS.ETIMEDOUT : undefined;
  if (problem === undefined) return error;
  return databaseError(`cannot use PostgreSQL${where(url)}: ${problem}`, error);
}

/** " at host:port/database", never the credentials; empty when the URL says no more (a socket, a service file). */
function where(url: string): string {
  try {
    const { hostname, port, pathname } = new URL(url);
    return hostname === '' ? '' : ` at ${hostname}:${port || '5432'}${pathname.length > 1 ? pathname : ''}`;
  } catch {
    return '';
  }
}
