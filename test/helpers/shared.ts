import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import { openDatabase, type DatabaseHandle, type OpenDatabaseOptions } from '../../src/db/open-database.js';
import { openPGlite } from '../../src/db/pglite-open.js';
import { createLocalProvider } from '../../src/embeddings/local-provider.js';
import type { EmbeddingProvider } from '../../src/embeddings/provider.js';
import { TEST_DATABASE_URL, uniqueSchema, type Engine } from './engines.js';

/**
 * Expensive things shared by every test in one file (vitest gives each file its own module graph):
 * one in-memory PGlite (initdb in WASM takes seconds; tests isolate by schema) and one local model.
 */
let pglite: Promise<PGlite> | undefined;
export function sharedPGlite(): Promise<PGlite> {
  pglite ??= openPGlite('memory://');
  return pglite;
}

/**
 * A database of `engine` in a schema of its own: on the file's shared PGlite, or on TEST_DATABASE_URL.
 * `options` replace the defaults (3 dimensions); close it with closeTestDatabase.
 */
export async function openTestDatabase(engine: Engine, options: Partial<OpenDatabaseOptions> = {}): Promise<DatabaseHandle> {
  return openDatabase({
    url: engine === 'postgres' ? TEST_DATABASE_URL : undefined,
    dataDir: 'memory://',
    schema: uniqueSchema(),
    embeddingDimensions: 3,
    pglite: engine === 'pglite' ? await sharedPGlite() : undefined,
    ...options,
  });
}

/** Closes a test database, first dropping its schema on PostgreSQL, which outlives the run (PGlite's does not). */
export async function closeTestDatabase(db: DatabaseHandle | undefined): Promise<void> {
  if (db === undefined) return;
  if (db.engine === 'postgres') await db.withAllSubjects('dropping the test schema', (trx) => sql`drop schema ${sql.id(db.schema)} cascade`.execute(trx));
  await db.close();
}

let embedder: EmbeddingProvider | undefined;
export function sharedLocalEmbedder(): EmbeddingProvider {
  if (embedder === undefined) {
    const real = createLocalProvider();
    // Shared across servers in the file: a server's close() must not unload it.
    embedder = {
      get model() {
        return real.model;
      },
      get dimensions() {
        return real.dimensions;
      },
      embed: (texts, options) => real.embed(texts, options),
      ready: () => real.ready(),
      close: async () => undefined,
    };
  }
  return embedder;
}

/**
 * The file's local model, failing on demand like a provider at a network edge: whenever `failure` returns an
 * error for the texts of a call, that call rejects with it.
 */
export function embedderFailingWhen(failure: (texts: readonly string[]) => Error | undefined): EmbeddingProvider {
  const real = sharedLocalEmbedder();
  return {
    get model() {
      return real.model;
    },
    get dimensions() {
      return real.dimensions;
    },
    embed: (texts, options) => {
      const error = failure(texts);
      return error === undefined ? real.embed(texts, options) : Promise.reject(error);
    },
    ready: () => real.ready(),
    close: async () => undefined,
  };
}
