import { sql, type RawBuilder } from 'kysely';

/**
 * Everything pgvector-specific: the text form of a vector, the dimension cap of its HNSW index, and the
 * `embedding::vector(N)` expression that index is built on (queries must repeat it exactly to use the index).
 */

/** pgvector's HNSW indexes vectors of at most 2000 dimensions; larger models are searched exactly. */
export const MAX_INDEXED_DIMENSIONS = 2000;

/** A vector as it is stored: its numbers and pgvector's text form, with the model and dimension that go with it. */
export interface StoredVector {
  readonly values: readonly number[];
  readonly literal: string;
  readonly model: string;
  readonly dimensions: number;
}

/** pgvector's text form, '[x,y,...]'. */
export function toVectorLiteral(vector: readonly number[]): string {
  return `[${vector.join(',')}]`;
}

export function storedVector(vector: readonly number[], model: string): StoredVector {
  return { values: vector, literal: toVectorLiteral(vector), model, dimensions: vector.length };
}

export function isIndexable(dimensions: number): boolean {
  return dimensions <= MAX_INDEXED_DIMENSIONS;
}

/**
 * `embedding::vector(N)`: the column holds vectors of whichever model wrote them, and a pgvector index needs a
 * fixed dimension, so each dimension gets a partial index on this expression. Plain SQL text, for the bench
 * seeder's raw client as well as for Kysely.
 */
export function fixedDimensionEmbedding(dimensions: number): string {
  if (!Number.isSafeInteger(dimensions) || dimensions < 1) throw new RangeError(`bad dimensions: ${dimensions}`);
  return `embedding::vector(${dimensions})`;
}

export function vectorIndexName(dimensions: number): string {
  return `memories_embedding_hnsw_${dimensions}`;
}

/** The per-dimension HNSW index: cosine distance, only over rows of that dimension. */
export function createVectorIndexStatement(dimensions: number): string {
  return `create index if not exists ${vectorIndexName(dimensions)} on memories
      using hnsw ((${fixedDimensionEmbedding(dimensions)}) vector_cosine_ops)
      where embedding_dimensions = ${dimensions}`;
}

/**
 * `vector` as a statement's parameter: a real[] the database casts to a vector. PGlite receives it in binary
 * (pglite-open.ts): parsing 512 numbers from text takes its WASM ~2 ms. Each use is a parameter of its own, so a
 * statement uses it once and names what it computes from it (`as distance`), however often it needs that.
 */
export function vectorParameter(vector: StoredVector, dimensions?: number): RawBuilder<string> {
  return dimensions === undefined ? sql<string>`${vector.values}::real[]::vector` : sql<string>`${vector.values}::real[]::vector(${sql.raw(String(dimensions))})`;
}

/** Cosine distance from the `embedding` column to `vector` (0 = same direction). */
export function cosineDistance(vector: StoredVector): RawBuilder<number> {
  return sql<number>`embedding <=> ${vectorParameter(vector)}`;
}

/** The same distance through the indexed expression, so the planner can walk the HNSW index (once a statement, too). */
export function indexedCosineDistance(vector: StoredVector): RawBuilder<number> {
  const fixed = sql.raw(fixedDimensionEmbedding(vector.dimensions));
  return sql<number>`${fixed} <=> ${vectorParameter(vector, vector.dimensions)}`;
}

/** A memory's vectors: its whole text's, and one per passage of a text of several (none for one passage). */
export interface MemoryVectors {
  readonly whole: StoredVector;
  readonly passages: readonly StoredVector[];
}

/**
 * The passages' vectors as a vector[]: they travel as one real[] parameter (binary on PGlite, as vectorParameter)
 * and are cut into vectors of the whole's dimension in SQL. An empty array for a text of one passage.
 */
export function passagesParameter(vectors: MemoryVectors): RawBuilder<string> {
  const { whole, passages } = vectors;
  if (passages.some((passage) => passage.dimensions !== whole.dimensions || passage.model !== whole.model)) {
    throw new RangeError('passage vectors must be of the whole text’s model and dimension');
  }
  if (passages.length === 0) return sql<string>`'{}'::vector[]`;
  const dimensions = sql.lit(whole.dimensions);
  return sql<string>`(select array_agg(flat.values[piece * ${dimensions} + 1 : (piece + 1) * ${dimensions}]::vector order by piece)
      from (select ${passages.flatMap((passage) => passage.values)}::real[] as values) as flat,
           generate_series(0, ${sql.lit(passages.length - 1)}) as piece)`;
}
