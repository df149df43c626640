import { countStaleEmbeddings, staleEmbeddingBatch, updateEmbedding, type EmbeddedTable } from '../db/memories/reembed.js';
import type { DatabaseHandle } from '../db/open-database.js';
import type { EmbeddingProvider } from '../embeddings/provider.js';
import { embedMemoryTexts, embedTombstoneTexts } from './passages.js';

export interface ReembedProgress {
  readonly table: EmbeddedTable;
  readonly done: number;
  readonly total: number;
}

/**
 * Re-embeds every memory and tombstone whose vector came from another model, and every memory not split into
 * passages (stored before they were, or split before migration 0014: embedMemoryTexts), in batches; each batch is
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
    const total = await db.withAllSubjects('re-embedding', (trx) => countStaleEmbeddings(trx, table, embedder.model));
    let lastId = 0;
    for (;;) {
      const batch = await db.withAllSubjects('re-embedding', (trx) => staleEmbeddingBatch(trx, table, embedder.model, lastId, batchSize));
      const last = batch.at(-1);
      if (last === undefined) break;
      const texts = batch.map((row) => row.text);
      const vectors = table === 'memories' ? await embedMemoryTexts(embedder, texts) : await embedTombstoneTexts(embedder, texts);
      await db.withAllSubjects('re-embedding', async (trx) => {
        for (const [index, row] of batch.entries()) await updateEmbedding(trx, table, row.id, vectors[index]!);
      });
      lastId = last.id;
      counts[table] += batch.length;
      onProgress({ table, done: counts[table], total });
    }
  }
  return counts;
}
