import type { Config } from '../config/load-config.js';
import { openDatabase } from '../db/open-database.js';
import { createEmbeddingProvider } from '../embeddings/create-provider.js';
import { latestMigration } from '../db/migrate.js';
import type { CommandIO } from './command.js';

export async function migrateCommand(config: Config, io: CommandIO): Promise<number> {
  const embedder = createEmbeddingProvider(config.embedding);
  // Known models have a known dimension; only an unknown one needs the provider asked.
  if (embedder.dimensions === 0) await embedder.ready();
  const db = await openDatabase({
    ...config.database,
    embeddingDimensions: embedder.dimensions,
  });
  await db.close();
  await embedder.close();
  io.stdout.write(`Database migrated to ${latestMigration} (schema "${config.database.schema}").\n`);
  return 0;
}
