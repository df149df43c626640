import { sql, type RawBuilder } from 'kysely';

/**
 * Everything pgvector-specific: how a vector travels as a parameter and as text, the dimension cap of its HNSW
 * index, and the `embedding::vector(N)` expression that index is built on (queries must repeat it exactly to use
 * the index).
 */

/** pgvector's HNSW indexes vectors of at most 2000 dimensions; larger models are searched exactly. */
export const MAX_INDEXED_DIMENSIONS = 2000;

/** A vector as it is stored: its numbers, with the model and dimension that go with it. */
export interface StoredVector {
  readonly values: readonly number[];
  readonly model: string;
  readonly dimensions: number;
}

/** pgvector's text form, '[x,y,...]' (for seeding rows directly). */
export function toVectorLiteral(vector: readonly number[]): string {
  return `[${vector.join(',')}]`;
}

export function storedVector(vector: readonly number[], model: string): StoredVector {
  return { values: vector, model, dimensions: vector.length };
}

const FLOAT4_OID = 700;

/**
 * `values` as a real[] in PostgreSQL's binary array format (array_recv's: dimensions, has-nulls flag, element
 * type, length and lower bound, then each element's length and value). Both engines take a byte array parameter in
 * binary: a vector's 512 numbers are neither written as text on the event loop nor parsed from it by the database
 * (PGlite's WASM took ~2 ms for that, against ~0.1 ms from binary).
 */
export function realArray(values: readonly number[]): Buffer {
  const bytes = Buffer.allocUnsafe(20 + values.length * 8);
  // A DataView (big-endian by default) writes 4-6× faster than Buffer's writeFloatBE, element by element.
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  view.setInt32(0, 1);
  view.setInt32(4, 0);
  view.setInt32(8, FLOAT4_OID);
  view.setInt32(12, values.length);
  view.setInt32(16, 1);
  for (let index = 0; index < values.length; index++) {
    view.setInt32(20 + index * 8, 4);
    view.setFloat32(24 + index * 8, values[index]!);
  }
  return bytes;
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

export function vectorIndexName(dimensions: number, table: VectorTable = 'memories'): string {
  return `${table}_embedding_hnsw_${dimensions}`;
}

/** The tables with an `embedding` column searched by vector. */
export type VectorTable = 'memories' | 'memory_restatements';

/** The per-dimension HNSW index: cosine distance, only over rows of that dimension. */
export function createVectorIndexStatement(dimensions: number, table: VectorTable = 'memories'): string {
  return `create index if not exists ${vectorIndexName(dimensions, table)} on ${table}
      using hnsw ((${fixedDimensionEmbedding(dimensions)}) vector_cosine_ops)
      where embedding_dimensions = ${dimensions}`;
}

/**
 * `vector` as a statement's parameter: a real[] in binary (realArray) that the database casts to a vector. Each
 * use is a parameter of its own, so a statement uses it once and names what it computes from it (`as distance`),
 * however often it needs that.
 */
export function vectorParameter(vector: StoredVector, dimensions?: number): RawBuilder<string> {
  const values = realArray(vector.values);
  return dimensions === undefined ? sql<string>`${values}::real[]::vector` : sql<string>`${values}::real[]::vector(${sql.raw(String(dimensions))})`;
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
 * The passages' vectors as a vector[]: they travel as one real[] parameter (in binary, as vectorParameter's)
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
      from (select ${realArray(passages.flatMap((passage) => passage.values))}::real[] as values) as flat,
           generate_series(0, ${sql.lit(passages.length - 1)}) as piece)`;
}
