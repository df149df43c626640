import { createReadStream, statSync } from 'node:fs';
import { once } from 'node:events';
import type { Config } from '../config/load-config.js';
import { createEmbeddingProvider, embeddingParallelism } from '../embeddings/create-provider.js';
import { MemoryService } from '../memory/memory-service.js';
import type { ImportSummary } from '../memory/types.js';
import { openStorage } from '../open-storage.js';
import { exportLines } from '../transfer/export-format.js';
import { importFile, refusalPlace } from '../transfer/import-file.js';
import { integerOption, subjectOption, UsageError, type CommandIO, type SubjectOptions } from './command.js';
import { progressOutput } from './progress.js';

/** Exit code of an import that finished but refused some lines (the rest is stored). */
export const EXIT_SOME_REFUSED = 3;

/**
 * The service over the configured storage. An import embeds with every local worker as a bulk worker (it serves
 * no requests; see createEmbeddingProvider); an export embeds nothing, so it does not load the model.
 */
async function withService<T>(config: Config, use: 'import' | 'export', work: (service: MemoryService) => Promise<T>): Promise<T> {
  const storage = await openStorage(
    config,
    use === 'import' ? { embedder: createEmbeddingProvider(config.embedding, undefined, 'maintenance') } : { warmUp: false },
  );
  try {
    return await work(new MemoryService({ db: storage.db, embedder: storage.embedder, nearDuplicateThreshold: config.memory.nearDuplicateThreshold, quota: config.memory.quota }));
  } finally {
    await storage.close();
  }
}

/** The space a transfer reaches: `--space ID|NAME`, as the subject names it (default: their personal space). */
export interface SpaceOption {
  readonly space: string | undefined;
}

const inSpace = (options: SpaceOption) => (options.space === undefined ? '' : ` in space ${JSON.stringify(options.space)}`);

/**
 * `export --user NAME` or `export --sub S` [--space ID|NAME]: the memories and tombstones of the subject's personal
 * space (or of one of their spaces) as JSONL on standard output; counts on stderr.
 */
export async function exportCommand(config: Config, options: SubjectOptions & SpaceOption & { args: readonly string[] }, io: CommandIO): Promise<number> {
  if (options.args.length > 0) throw new UsageError('export: takes no file; redirect standard output instead (export --sub S > file.jsonl)');
  const subject = subjectOption(options, 'export', config);
  return withService(config, 'export', async (service) => {
    const counts = { memory: 0, tombstone: 0 };
    const records = service.exportRecords(subject, options.space);
    // The first record is read before the file's header is written: a space the subject may not read is refused
    // with nothing on standard output.
    const first = await records.next();
    async function* counted() {
      if (first.done === true) return;
      counts[first.value.kind] += 1;
      yield first.value;
      for await (const record of records) {
        counts[record.kind] += 1;
        yield record;
      }
    }
    for await (const line of exportLines(counted())) {
      if (!io.stdout.write(line)) await once(io.stdout, 'drain');
    }
    io.stderr.write(`Exported ${counts.memory} memories and ${counts.tombstone} tombstones of ${subject}${inSpace(options)}.\n`);
    return 0;
  });
}

/**
 * `import --user NAME FILE` or `import --sub S FILE` [--space ID|NAME, one the subject may write]: imports FILE (or standard input for `-`), with progress on stderr and a summary on
 * standard output. Exit 0 when every line was imported or skipped as a duplicate, 3 when some were refused,
 * 1 when the import stopped (run it again to continue).
 */
export async function importCommand(
  config: Config,
  options: SubjectOptions & SpaceOption & { batchSize: string | undefined; args: readonly string[] },
  io: CommandIO & { stdin: NodeJS.ReadableStream },
): Promise<number> {
  const subject = subjectOption(options, 'import', config);
  const batchSize = integerOption(options.batchSize, 64, 1, 2048, 'import: --batch-size');
  const [file, ...extra] = options.args;
  if (file === undefined || extra.length > 0) throw new UsageError('import: give exactly one FILE (or - for standard input)');
  let size: number | undefined;
  if (file !== '-') {
    try {
      size = statSync(file).size;
    } catch (error) {
      throw new UsageError(`import: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    }
  }
  return withService(config, 'import', async (service) => {
    const progress = progressOutput(io.stderr);
    const started = Date.now();
    const summary = await importFile(service, subject, file === '-' ? (io.stdin as AsyncIterable<Uint8Array>) : createReadStream(file), {
      maxTextChars: config.memory.maxTextChars,
      batchSize,
      streams: embeddingParallelism(config.embedding),
      space: options.space,
      onProgress: ({ bytesRead, summary: sofar }) => {
        const seconds = (Date.now() - started) / 1000;
        const rate = seconds > 0 ? Math.round((sofar.memoriesImported + sofar.tombstonesImported) / seconds) : 0;
        progress.update(size === undefined || size === 0 ? undefined : bytesRead / size, `${counts(sofar)} (${rate}/s)`);
      },
    });
    progress.finish();
    io.stdout.write(describeSummary(summary));
    if (summary.stoppedBy !== undefined) {
      io.stderr.write(
        `Import stopped: ${summary.stoppedBy.code}: ${summary.stoppedBy.message}\n` +
          'Everything counted above is stored; run the same command again to continue (what is stored is skipped).\n',
      );
      return 1;
    }
    return summary.refused > 0 ? EXIT_SOME_REFUSED : 0;
  });
}

function counts(summary: ImportSummary): string {
  return `${summary.memoriesImported} imported, ${summary.tombstonesImported} tombstones, ${summary.duplicatesSkipped} duplicates skipped, ${summary.refused} refused`;
}

export function describeSummary(summary: ImportSummary): string {
  const lines = [
    `Imported ${summary.memoriesImported} memories and ${summary.tombstonesImported} tombstones; ` +
      `skipped ${summary.duplicatesSkipped} already stored; refused ${summary.refused}.`,
  ];
  for (const refusal of summary.refusals) lines.push(`  ${refusalPlace(refusal)}: ${refusal.reason}`);
  if (summary.refused > summary.refusals.length) lines.push(`  … and ${summary.refused - summary.refusals.length} more`);
  return `${lines.join('\n')}\n`;
}
