import { sql } from 'kysely';
import { vectorParameter, type StoredVector } from '../pgvector.js';
import type { DbTransaction } from '../schema.js';

/** The SQL of `memory-service reembed`: rows whose vector came from another model, table by table. */
export type EmbeddedTable = 'memories' | 'tombstones';

export async function countStaleEmbeddings(trx: DbTransaction, table: EmbeddedTable, model: string): Promise<number> {
  const row = await trx
    .selectFrom(table)
    .select(sql<string>`count(*)`.as('n'))
    .where('embedding_model', '<>', model)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The next `size` rows after `afterId` (in id order) whose vector came from another model. */
export async function staleEmbeddingBatch(
  trx: DbTransaction,
  table: EmbeddedTable,
  model: string,
  afterId: number,
  size: number,
): Promise<{ id: number; text: string }[]> {
  const rows = await trx
    .selectFrom(table)
    .select(['id', 'text'])
    .where('embedding_model', '<>', model)
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(size)
    .execute();
  return rows.map((row) => ({ id: Number(row.id), text: row.text }));
}

export async function updateEmbedding(trx: DbTransaction, table: EmbeddedTable, id: number, vector: StoredVector): Promise<void> {
  await sql`
    update ${sql.table(table)}
       set embedding = ${vectorParameter(vector)},
           embedding_model = ${vector.model},
           embedding_dimensions = ${vector.dimensions}
     where id = ${id}`.execute(trx);
}
