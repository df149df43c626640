import { sql, type RawBuilder } from 'kysely';
import { passagesParameter, vectorParameter, type MemoryVectors } from '../pgvector.js';
import type { DbTransaction } from '../schema.js';

/** The SQL of `memory-service reembed`: rows whose vectors are stale, table by table. */
export type EmbeddedTable = 'memories' | 'tombstones' | 'memory_restatements';

/**
 * A row is stale when its vector came from another model, or when its whole vector was not made from its
 * passages: memories not split (written before migration 0013, or split before 0014, whose whole vector was the
 * model's for the paragraph), tombstones written before 0015. Restatements (0017) were always made from passages.
 */
function stale(table: EmbeddedTable, model: string): RawBuilder<boolean> {
  if (table === 'memory_restatements') return sql<boolean>`embedding_model <> ${model}`;
  return table === 'memories'
    ? sql<boolean>`(embedding_model <> ${model} or passage_embeddings is null)`
    : sql<boolean>`(embedding_model <> ${model} or not whole_from_passages)`;
}

export async function countStaleEmbeddings(trx: DbTransaction, table: EmbeddedTable, model: string): Promise<number> {
  const { rows } = await sql<{ n: string | number }>`select count(*) as n from ${sql.table(table)} where ${stale(table, model)}`.execute(trx);
  return Number(rows[0]?.n ?? 0);
}

/** The next `size` stale rows after `afterId` (in id order). */
export async function staleEmbeddingBatch(
  trx: DbTransaction,
  table: EmbeddedTable,
  model: string,
  afterId: number,
  size: number,
): Promise<{ id: number; text: string }[]> {
  const { rows } = await sql<{ id: string | number; text: string }>`
    select id, text from ${sql.table(table)}
     where ${stale(table, model)} and id > ${afterId}
     order by id
     limit ${size}`.execute(trx);
  return rows.map((row) => ({ id: Number(row.id), text: row.text }));
}

/** Sets a row's vectors; a tombstone or a restatement keeps only the whole text's. */
export async function updateEmbedding(trx: DbTransaction, table: EmbeddedTable, id: number, vectors: MemoryVectors): Promise<void> {
  const { whole } = vectors;
  await sql`
    update ${sql.table(table)}
       set embedding = ${vectorParameter(whole)},
           embedding_model = ${whole.model},
           embedding_dimensions = ${whole.dimensions}
           ${table === 'memories' ? sql`, passage_embeddings = ${passagesParameter(vectors)}` : table === 'tombstones' ? sql`, whole_from_passages = true` : sql``}
     where id = ${id}`.execute(trx);
}
