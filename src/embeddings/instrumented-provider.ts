import type { EmbeddingProvider } from './provider.js';

export interface EmbeddingObserver {
  observeEmbedding(texts: number, seconds: number, ok: boolean): void;
}

/** The same provider, reporting the latency and outcome of every embed() call (never the texts). */
export function instrumentProvider(provider: EmbeddingProvider, observer: EmbeddingObserver): EmbeddingProvider {
  return {
    // Getters: a provider may learn its dimension in ready().
    get model() {
      return provider.model;
    },
    get dimensions() {
      return provider.dimensions;
    },
    async embed(texts, options) {
      const started = performance.now();
      let ok = false;
      try {
        const vectors = await provider.embed(texts, options);
        ok = true;
        return vectors;
      } finally {
        observer.observeEmbedding(texts.length, (performance.now() - started) / 1000, ok);
      }
    },
    ready: () => provider.ready(),
    close: () => provider.close(),
  };
}
