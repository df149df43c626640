/**
 * The seam between the memory service and whatever turns text into vectors.
 * Implementations throw ServiceError('EMBEDDING_ERROR') with a message saying what failed.
 */
export interface EmbeddingProvider {
  /** Stored with every vector; vectors of different models are never compared. */
  readonly model: string;
  readonly dimensions: number;
  /** One vector per input text, in order; each of length `dimensions`, L2-normalised. */
  embed(texts: readonly string[]): Promise<number[][]>;
  /** Resolves when the provider can serve; rejects with EMBEDDING_ERROR otherwise. */
  ready(): Promise<void>;
  close(): Promise<void>;
}
