import type { Config } from '../config/load-config.js';
import { createEmbeddingProvider, embeddingParallelism } from '../embeddings/create-provider.js';
import { reembedAll } from '../memory/reembed.js';
import { openStorage } from '../open-storage.js';
import { integerOption, type CommandIO } from './command.js';

export async function reembedCommand(config: Config, options: { batchSize: string | undefined }, io: CommandIO): Promise<number> {
  const batchSize = integerOption(options.batchSize, 64, 1, 2048, 'reembed: --batch-size');
  // Every worker (or request in flight) embeds a batch of its own.
  const streams = embeddingParallelism(config.embedding);
  const { db, embedder, close } = await openStorage(config, { embedder: createEmbeddingProvider(config.embedding, undefined, 'maintenance') });
  try {
    const counts = await reembedAll(db, embedder, { batchSize, streams }, ({ table, done, total }) => {
      io.stderr.write(`re-embedded ${done}/${total} ${table}\n`);
    });
    const restated = counts.restatements === 0 ? '' : ` and ${counts.restatements} restatements`;
    io.stdout.write(`Re-embedded ${counts.memories} memories and ${counts.tombstones} tombstones${restated} with ${embedder.model}.\n`);
    return 0;
  } finally {
    await close();
  }
}
