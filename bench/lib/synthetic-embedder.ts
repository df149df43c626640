import { createHash } from 'node:crypto';
import { LOCAL_MODEL_DIMENSIONS, LOCAL_MODEL_NAME } from '../../src/embeddings/local-provider.js';
import type { EmbeddingProvider } from '../../src/embeddings/provider.js';
import { mulberry32 } from '../../test/helpers/prng.js';

/**
 * Vectors without a model, for measuring everything but the embedding step and for seeding 100k memories
 * (the local model costs ~15 ms a text). Each text names one of TOPICS people; its vector lies near that
 * person's centroid, so a query about a person finds that person's memories, as real embeddings would, and
 * so does full-text search (each name is in ~1/TOPICS of the memories, each other word in a few hundred).
 * It reports the local model's name and dimension, so seeded rows and queries of both kinds are comparable.
 */
export const TOPICS = 256;
const NOISE = 0.35;
const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'tu', 'sa', 'vo', 'di', 'pe', 'gu', 'na', 'shi', 'bo', 'el', 'ri', 'zu'];
/** Pseudo-words that no stemmer shortens into each other: 16^3 of them. */
const word = (n: number) => SYLLABLES[n % 16]! + SYLLABLES[(n >> 4) % 16]! + SYLLABLES[(n >> 8) % 16]!;
const name = (topic: number) => `${word(topic * 13 + 7)[0]!.toUpperCase()}${word(topic * 13 + 7).slice(1)}`;
const TOPIC_OF = new Map(Array.from({ length: TOPICS }, (_, topic) => [name(topic).toLowerCase(), topic]));
const OBJECTS = 600;
const object = (n: number) => word(4000 - (n % OBJECTS));

/** Uniform in [-0.5, 0.5). */
function generator(seed: number): () => number {
  const uniform = mulberry32(seed);
  return () => uniform() - 0.5;
}

const centroids: number[][] = Array.from({ length: TOPICS }, (_, topic) => {
  const next = generator(topic + 1);
  return Array.from({ length: LOCAL_MODEL_DIMENSIONS }, next);
});

export function syntheticVector(text: string): number[] {
  const digest = createHash('sha256').update(text).digest();
  const named = text.toLowerCase().match(/[a-z]+/g)?.find((w) => TOPIC_OF.has(w));
  const topic = named === undefined ? digest.readUInt16BE(0) % TOPICS : TOPIC_OF.get(named)!;
  const noise = generator(digest.readUInt32BE(4));
  const vector = centroids[topic]!.map((value) => value + NOISE * noise());
  const norm = Math.hypot(...vector);
  return vector.map((value) => value / norm);
}

export function syntheticEmbedder(): EmbeddingProvider {
  return {
    model: LOCAL_MODEL_NAME,
    dimensions: LOCAL_MODEL_DIMENSIONS,
    embed: async (texts) => texts.map(syntheticVector),
    ready: async () => undefined,
    close: async () => undefined,
  };
}

const PLACES = ['Lisbon', 'Kyoto', 'Oslo', 'Tucson', 'Cork', 'Hanoi', 'Quito', 'Tallinn'];

/** A plausible memory text about person `topic`. */
export function memoryText(index: number, topic = index % TOPICS): string {
  return `${name(topic)} prefers ${object(index)} over ${object(index * 7 + 3)} when in ${PLACES[index % PLACES.length]} (note ${index})`;
}

/** A question about one person and one thing. */
export function queryText(index: number, topic = (index * 7919) % TOPICS): string {
  return `does ${name(topic)} like ${object(index * 31)}`;
}
