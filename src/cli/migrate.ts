import type { Config } from '../config/load-config.js';
import { latestMigration } from '../db/migrate.js';
import { openStorage } from '../open-storage.js';
import type { CommandIO } from './command.js';

export async function migrateCommand(config: Config, io: CommandIO): Promise<number> {
  const storage = await openStorage(config, { warmUp: false });
  await storage.close();
  io.stdout.write(`Database migrated to ${latestMigration} (schema "${config.database.schema}").\n`);
  return 0;
}
