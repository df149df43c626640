import { countStaleEmbeddings, staleEmbeddingBatch, updateEmbedding, type EmbeddedTable } from '../db/memories/reembed.js';
import type { DatabaseHandle } from '../db/open-database.js';
import type { EmbeddingProvider } from '../embeddings/provider.js';
import { embedMemoryTexts, embedTombstoneTexts } from './passages.js';

export interface ReembedProgress {
  readonly table: EmbeddedTable;
  readonly done: number;
  readonly total: number;
}

export interface ReembedOptions {
  /** Rows read, embedded and written back per transaction. */
  readonly batchSize: number;
  /** Batches embedded at once, each under its own fairness key, so that every worker of the provider has one. */
  readonly streams: number;
}

/**
 * Re-embeds every memory, tombstone and restatement the database holds stale (another model's vector, or a whole vector not
 * made from the text's passages: db/memories/reembed.ts), as embedMemoryTexts makes them, in batches; each batch is
 * one transaction, so an interruption leaves a consistent mix that a second run finishes. `streams` batches are
 * embedded at once; batches are read one at a time, in id order, so no row is taken twice.
 */
export async function reembedAll(
  db: DatabaseHandle,
  embedder: EmbeddingProvider,
  { batchSize, streams }: ReembedOptions,
  onProgress: (progress: ReembedProgress) => void,
): Promise<{ memories: number; tombstones: number; restatements: number }> {
  const counts: Record<EmbeddedTable, number> = { memories: 0, tombstones: 0, memory_restatements: 0 };
  for (const table of ['memories', 'tombstones', 'memory_restatements'] as const) {
    const total = await db.withAllSubjects('re-embedding', (trx) => countStaleEmbeddings(trx, table, embedder.model));
    let lastId = 0;
    let reading: Promise<unknown> = Promise.resolve();
    const nextBatch = (): Promise<{ id: number; text: string }[]> => {
      const batch = reading.then(async () => {
        const rows = await db.withAllSubjects('re-embedding', (trx) => staleEmbeddingBatch(trx, table, embedder.model, lastId, batchSize));
        lastId = rows.at(-1)?.id ?? lastId;
        return rows;
      });
      reading = batch.catch(() => undefined);
      return batch;
    };
    let failed = false;
    const stream = async (key: string): Promise<void> => {
      try {
        for (let batch = await nextBatch(); batch.length > 0 && !failed; batch = await nextBatch()) {
          const texts = batch.map((row) => row.text);
          const vectors = table === 'memories' ? await embedMemoryTexts(embedder, texts, key) : await embedTombstoneTexts(embedder, texts, key);
          await db.withAllSubjects('re-embedding', async (trx) => {
            for (const [index, row] of batch.entries()) await updateEmbedding(trx, table, row.id, vectors[index]!);
          });
          counts[table] += batch.length;
          onProgress({ table, done: counts[table], total });
        }
      } catch (error) {
        failed = true; // the other streams stop after their current batch
        throw error;
      }
    };
    const outcomes = await Promise.allSettled(Array.from({ length: Math.max(1, streams) }, (_, index) => stream(`reembed:${index}`)));
    const failure = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failure !== undefined) throw failure.reason;
  }
  return { memories: counts.memories, tombstones: counts.tombstones, restatements: counts.memory_restatements };
}
