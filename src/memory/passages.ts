import { storedVector, type MemoryVectors } from '../db/pgvector.js';
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
 *
 * A text of several passages is embedded passage by passage only, and its whole vector is the mean of theirs:
 * the model's own vector for the paragraph costs about as much again as all its sentences together, and it ranked
 * LoCoMo's turns worse than the mean does (bench/README, "Passages"). Every whole vector, a memory's or a
 * tombstone's, is made this way, so that the same text always gets the same vector.
 */
export async function embedMemoryTexts(embedder: EmbeddingProvider, texts: readonly string[], key?: string): Promise<MemoryVectors[]> {
  const passages = texts.map(passagesOf);
  const embedded = passages.flatMap((pieces, index) => (pieces.length === 0 ? [texts[index]!] : pieces));
  const vectors = await embedder.embed(embedded, key === undefined ? {} : { key });
  if (vectors.length !== embedded.length) throw embeddingError(`the embedding provider returned ${vectors.length} vectors for ${embedded.length} texts`);
  let next = 0;
  return passages.map((pieces) => {
    if (pieces.length === 0) return { whole: storedVector(vectors[next++]!, embedder.model), passages: [] };
    const own = vectors.slice(next, (next += pieces.length));
    return { whole: storedVector(meanDirection(own), embedder.model), passages: own.map((vector) => storedVector(vector, embedder.model)) };
  });
}

/** A tombstone's vectors: its whole text's only (a tombstone is never recalled, only compared with a text remembered). */
export async function embedTombstoneTexts(embedder: EmbeddingProvider, texts: readonly string[], key?: string): Promise<MemoryVectors[]> {
  return (await embedMemoryTexts(embedder, texts, key)).map(({ whole }) => ({ whole, passages: [] }));
}

/** The unit vector along the mean of the vectors' directions (each scaled to length 1 first). */
function meanDirection(vectors: readonly (readonly number[])[]): number[] {
  const sum = new Array<number>(vectors[0]!.length).fill(0);
  for (const vector of vectors) {
    const length = Math.hypot(...vector) || 1;
    vector.forEach((value, index) => (sum[index]! += value / length));
  }
  const length = Math.hypot(...sum) || 1;
  return sum.map((value) => value / length);
}
