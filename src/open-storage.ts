import type { PGlite } from '@electric-sql/pglite';
import type { Config } from './config/load-config.js';
import { openDatabase, type DatabaseHandle } from './db/open-database.js';
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
 * The embedder, then the database: the database's vector index is made for the embedder's dimension, which
 * an OpenAI-compatible server may have to be asked for. Migrations run as the database opens.
 */
export async function openStorage(config: Config, options: OpenStorageOptions = {}): Promise<Storage> {
  const embedder = options.embedder ?? createEmbeddingProvider(config.embedding, options.logger);
  let db: DatabaseHandle;
  try {
    if (options.warmUp !== false || embedder.dimensions === 0) await embedder.ready();
    db = await openDatabase({
      ...config.database,
      embeddingDimensions: embedder.dimensions,
      pglite: options.pglite,
      onDriverError: (failure, activity) => options.logger?.error({ err: failure, activity }, 'database error'),
      onEngineEvent: (event, detail) =>
        event === 'lost'
          ? options.logger?.error({ reason: detail }, 'embedded database lost; it is reopened on the next statement')
          : options.logger?.warn({ dataDir: detail }, 'embedded database reopened'),
    });
  } catch (error) {
    await embedder.close();
    throw error;
  }
  return {
    embedder,
    db,
    async close() {
      await db.close();
      await embedder.close();
    },
  };
}
