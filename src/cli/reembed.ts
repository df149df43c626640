import type { Config } from '../config/load-config.js';
import { reembedAll } from '../memory/reembed.js';
import { openStorage } from '../open-storage.js';
import { integerOption, type CommandIO } from './command.js';

export async function reembedCommand(config: Config, options: { batchSize: string | undefined }, io: CommandIO): Promise<number> {
  const batchSize = integerOption(options.batchSize, 64, 1, 2048, 'reembed: --batch-size');
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
