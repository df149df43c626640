import type { PGlite } from '@electric-sql/pglite';
import { openPGlite } from '../../src/db/pglite-open.js';
import { createLocalProvider } from '../../src/embeddings/local-provider.js';
import type { EmbeddingProvider } from '../../src/embeddings/provider.js';

/**
 * Expensive things shared by every test in one file (vitest gives each file its own module graph):
 * one in-memory PGlite (initdb in WASM takes seconds; tests isolate by schema) and one local model.
 */
let pglite: Promise<PGlite> | undefined;
export function sharedPGlite(): Promise<PGlite> {
  pglite ??= openPGlite('memory://');
  return pglite;
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
