import { embeddingError } from '../errors.js';

/**
 * Checks that `vector` is an array of `dimensions` finite numbers with a non-zero length and
 * returns a new, L2-normalised copy. Throws EMBEDDING_ERROR naming `source` otherwise.
 */
export function normaliseVector(vector: unknown, dimensions: number, source: string): number[] {
  if (!Array.isArray(vector) && !ArrayBuffer.isView(vector)) {
    throw embeddingError(`${source} returned a malformed embedding (not an array of numbers)`);
  }
  const values = vector as ArrayLike<unknown>;
  if (values.length !== dimensions) {
    throw embeddingError(`${source} returned a vector of the wrong dimension: expected ${dimensions} dimensions, got ${values.length}`);
  }
  let sumOfSquares = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw embeddingError(`${source} returned a malformed embedding (element ${i} is not a finite number)`);
    }
    sumOfSquares += v * v;
  }
  const norm = Math.sqrt(sumOfSquares);
  if (!(norm > 0) || !Number.isFinite(norm)) {
    throw embeddingError(`${source} returned a zero-length vector that cannot be normalised`);
  }
  const out = new Array<number>(values.length);
  for (let i = 0; i < values.length; i++) out[i] = (values[i] as number) / norm;
  return out;
}
