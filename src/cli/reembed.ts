import type { Config } from '../config/load-config.js';
import { reembedAll } from '../memory/reembed.js';
import { openStorage } from '../open-storage.js';
import { UsageError, type CommandIO } from './command.js';

export async function reembedCommand(config: Config, options: { batchSize: string | undefined }, io: CommandIO): Promise<number> {
  const batchSize = Number(options.batchSize ?? '64');
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 2048) {
    throw new UsageError(`reembed: --batch-size must be a whole number from 1 to 2048 (got ${JSON.stringify(options.batchSize)})`);
  }
  const { db, embedder, close } = await openStorage(config);
  try {
    const counts = await reembedAll(db, embedder, batchSize, ({ table, done, total }) => {
      io.stderr.write(`re-embedded ${done}/${total} ${table}\n`);
    });
    io.stdout.write(`Re-embedded ${counts.memories} memories and ${counts.tombstones} tombstones with ${embedder.model}.\n`);
    return 0;
  } finally {
    await close();
  }
}
