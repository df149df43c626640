import { sql } from 'kysely';
import type { DatabaseHandle } from '../db/open-database.js';
import type { EmbeddingProvider } from '../embeddings/provider.js';
import { toVectorLiteral } from './vector.js';

export interface ReembedProgress {
  readonly table: 'memories' | 'tombstones';
  readonly done: number;
  readonly total: number;
}

/**
 * Re-embeds every memory and tombstone whose vector came from another model, in batches; each batch is
 * one transaction, so an interruption leaves a consistent mix that a second run finishes.
 */
export async function reembedAll(
  db: DatabaseHandle,
  embedder: EmbeddingProvider,
  batchSize: number,
  onProgress: (progress: ReembedProgress) => void,
): Promise<{ memories: number; tombstones: number }> {
  const counts = { memories: 0, tombstones: 0 };
  for (const table of ['memories', 'tombstones'] as const) {
    const total = await db.withAllSubjects(async (trx) => {
      const row = await trx
        .selectFrom(table)
        .select(sql<string>`count(*)`.as('n'))
        .where('embedding_model', '<>', embedder.model)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    });
    let lastId = 0;
    for (;;) {
      const batch = await db.withAllSubjects((trx) =>
        trx
          .selectFrom(table)
          .select(['id', 'text'])
          .where('embedding_model', '<>', embedder.model)
          .where('id', '>', lastId as never)
          .orderBy('id')
          .limit(batchSize)
          .execute(),
      );
      if (batch.length === 0) break;
      const vectors = await embedder.embed(batch.map((row) => row.text));
      await db.withAllSubjects(async (trx) => {
        for (const [index, row] of batch.entries()) {
          const vector = vectors[index]!;
          await sql`
            update ${sql.table(table)}
               set embedding = ${toVectorLiteral(vector)}::vector,
                   embedding_model = ${embedder.model},
                   embedding_dimensions = ${vector.length}
             where id = ${row.id}`.execute(trx);
        }
      });
      lastId = Number(batch.at(-1)!.id);
      counts[table] += batch.length;
      onProgress({ table, done: counts[table], total });
    }
  }
  return counts;
}
