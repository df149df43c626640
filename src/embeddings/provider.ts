/**
 * The seam between the memory service and whatever turns text into vectors.
 * Implementations throw ServiceError('EMBEDDING_ERROR') with a message saying what failed.
 */
export interface EmbeddingProvider {
  /** Stored with every vector; vectors of different models are never compared. */
  readonly model: string;
  readonly dimensions: number;
  /** One vector per input text, in order; each of length `dimensions`, L2-normalised. */
  embed(texts: readonly string[], options?: EmbedOptions): Promise<number[][]>;
  /** Resolves when the provider can serve; rejects with EMBEDDING_ERROR otherwise. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export interface EmbedOptions {
  /**
   * Whose texts these are (the subject), so that a provider with a queue can serve callers fairly; calls without
   * a key (maintenance) share one.
   */
  readonly key?: string;
}
