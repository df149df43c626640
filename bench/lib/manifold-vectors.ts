import { createHash } from 'node:crypto';
import { LOCAL_MODEL_DIMENSIONS } from '../../src/embeddings/local-provider.js';
import { normal } from '../../test/helpers/prng.js';

/**
 * Synthetic vectors with the structure of real embeddings: points of a 16-dimensional Gaussian mixture (one
 * component per topic) mapped into 512 dimensions by a fixed random projection. Unlike independent noise in
 * 512 dimensions, which makes every member of a topic almost equally far from a query, this gives each query
 * well-separated nearest neighbours, so the recall of an approximate index can be measured meaningfully.
 */
const LATENT = 16;
const TOPICS = 256;

const shared = normal(7);
const projection = Array.from({ length: LOCAL_MODEL_DIMENSIONS }, () => Array.from({ length: LATENT }, shared));
const centres = Array.from({ length: TOPICS }, () => Array.from({ length: LATENT }, () => 2 * shared()));

/** A vector for `text`, near the centre of the topic its "topic N" names. */
export function manifoldVector(text: string): number[] {
  const digest = createHash('sha256').update(text).digest();
  const topic = Number(/topic (\d+)/.exec(text)?.[1] ?? digest.readUInt16BE(0)) % TOPICS;
  const noise = normal(digest.readUInt32BE(4));
  const latent = centres[topic]!.map((value) => value + noise());
  const vector = projection.map((row) => row.reduce((sum, weight, i) => sum + weight * latent[i]!, 0) + 0.05 * noise());
  const norm = Math.hypot(...vector);
  return vector.map((value) => value / norm);
}
