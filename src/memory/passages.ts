import { storedVector, type MemoryVectors, type StoredVector } from '../db/pgvector.js';
import { embeddingError } from '../errors.js';
import type { EmbeddingProvider } from '../embeddings/provider.js';

/**
 * A memory of several sentences is also embedded sentence by sentence (its passages), because a sentence
 * encoder's one vector for a paragraph is an average that a question about one of its sentences may not come
 * near: asked "When did Caroline go to the support group?", the turn "Caroline: Hey Mel! Good to see you! How have
 * you been? I went to a LGBTQ support group yesterday …" is found by its last sentence. Recall ranks by both
 * (vector-ranking.ts); remember's near-duplicate check compares whole texts only.
 */

/** Most passages of one memory: a longer text's sentences are grouped, in order, into this many. */
export const MAX_PASSAGES = 16;

const sentences = new Intl.Segmenter('en', { granularity: 'sentence' });
/** A segment the segmenter ends after an abbreviation or an initial ("Dr.", "Mrs.", "K."): the sentence goes on. */
const ABBREVIATION_END = /(?:^|[\s(])(?:Dr|Mr|Mrs|Ms|Mx|Prof|Rev|Sr|Jr|St|Mt|Ft|No|vs|etc|approx|e\.g|i\.e|[A-Z])\.$/;
/** A label that heads the whole text ("Caroline: …", "Meeting with Sam: …"): it is said of every sentence. */
const LEADING_LABEL = /^([^\s:][^:\n]{0,40}?):\s+(?=\S)/;

/**
 * The passages of `text` to embed besides the whole: its sentences, each with the text's leading label if it has
 * one; none for a text of one sentence. Sentences beyond MAX_PASSAGES are grouped with their neighbours.
 */
export function passagesOf(text: string): string[] {
  const label = LEADING_LABEL.exec(text);
  const body = label === null ? text : text.slice(label[0].length);
  const found: string[] = [];
  for (const { segment } of sentences.segment(body)) {
    const sentence = segment.trim();
    if (sentence.length === 0) continue;
    const previous = found.at(-1);
    if (previous !== undefined && ABBREVIATION_END.test(previous)) found[found.length - 1] = `${previous} ${sentence}`;
    else found.push(sentence);
  }
  if (found.length < 2) return [];
  const grouped = groupInOrder(found, MAX_PASSAGES);
  return label === null ? grouped : grouped.map((passage) => `${label[1]}: ${passage}`);
}

/** `items` joined, in order, into at most `most` groups of as even a count as can be. */
function groupInOrder(items: readonly string[], most: number): string[] {
  if (items.length <= most) return [...items];
  return Array.from({ length: most }, (_, group) =>
    items.slice(Math.floor((group * items.length) / most), Math.floor(((group + 1) * items.length) / most)).join(' '),
  );
}

/**
 * Each text's vectors, whole and passages, from one call to the provider (so a batch of texts and their
 * passages is one batch): `key` is the provider's fairness key (the subject), when there is one.
 */
export async function embedMemoryTexts(embedder: EmbeddingProvider, texts: readonly string[], key?: string): Promise<MemoryVectors[]> {
  const passages = texts.map(passagesOf);
  const vectors = await embedStored(embedder, texts.flatMap((text, index) => [text, ...passages[index]!]), key);
  let next = 0;
  const take = () => vectors[next++]!;
  return passages.map((pieces) => ({ whole: take(), passages: pieces.map(take) }));
}

/** A tombstone's vectors: its whole text's only (a tombstone is never recalled, only compared with a text remembered). */
export async function embedTombstoneTexts(embedder: EmbeddingProvider, texts: readonly string[], key?: string): Promise<MemoryVectors[]> {
  return (await embedStored(embedder, texts, key)).map((whole) => ({ whole, passages: [] }));
}

/** One provider call for `texts`, a stored vector for each (the count checked). */
async function embedStored(embedder: EmbeddingProvider, texts: readonly string[], key: string | undefined): Promise<StoredVector[]> {
  const vectors = await embedder.embed(texts, key === undefined ? {} : { key });
  if (vectors.length !== texts.length) throw embeddingError(`the embedding provider returned ${vectors.length} vectors for ${texts.length} texts`);
  return vectors.map((vector) => storedVector(vector, embedder.model));
}
