import { invalidInput } from '../errors.js';
import type { MemoryService } from '../memory/memory-service.js';
import type { ImportItem, ImportRefusal, ImportSummary } from '../memory/types.js';
import { ImportLineReader } from './import-format.js';
import { fileLines } from './lines.js';
import type { Caller } from '../spaces/spaces.js';

/**
 * Longest line read: 1 MiB, or room for the longest text escaped (\uXXXX is 6 bytes a character) when MaxTextChars
 * is set higher. Parsing a line takes one turn of the event loop, so this bounds that turn (a few milliseconds); a
 * longer line is refused by number and skipped without being held (see fileLines).
 */
export function importLineBytes(maxTextChars: number): number {
  return Math.max(1024 * 1024, 6 * maxTextChars + 64 * 1024);
}

export interface ImportFileOptions {
  /** MaxTextChars: the longest text a line may carry. */
  readonly maxTextChars: number;
  /** Most lines one file may have (the page's limit); past it the import stops, what was stored kept. */
  readonly maxLines?: number;
  /** Items embedded and stored together. */
  readonly batchSize: number;
  /** Embedding calls made at once for a batch (ImportOptions.streams). */
  readonly streams?: number;
  /** Told after every batch how far the file has been read and what happened so far. */
  readonly onProgress?: (progress: { readonly bytesRead: number; readonly summary: ImportSummary }) => void;
  /** The space imported into (an id or a name); the personal space when undefined. */
  readonly space?: string | undefined;
}

/** Imports a JSONL file (this service's export or an MCP memory server's memory.jsonl) into a space of the caller's. */
export async function importFile(
  service: MemoryService,
  caller: Caller,
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options: ImportFileOptions,
): Promise<ImportSummary> {
  const reader = new ImportLineReader(options.maxTextChars);
  const maxLines = options.maxLines ?? Infinity;
  let bytesRead = 0;
  async function* items(): AsyncGenerator<ImportItem> {
    for await (const line of fileLines(source, importLineBytes(options.maxTextChars))) {
      bytesRead = line.bytesRead;
      if (line.number > maxLines) {
        throw invalidInput(`line ${line.number}: the file has more than ${maxLines} lines, the most one import here reads (split it, or import it with the command line)`);
      }
      if (line.text === undefined) yield { kind: 'refused', source: { line: line.number }, reason: line.problem ?? 'unreadable' };
      else yield* reader.read(line.number, line.text);
    }
  }
  return service.import(caller, items(), {
    batchSize: options.batchSize,
    ...(options.streams === undefined ? {} : { streams: options.streams }),
    onBatch: (summary) => options.onProgress?.({ bytesRead, summary }),
  }, options.space);
}

/** "line 12", "line 3, observations[1]". */
export function refusalPlace(refusal: ImportRefusal): string {
  return refusal.source.part === undefined ? `line ${refusal.source.line}` : `line ${refusal.source.line}, ${refusal.source.part}`;
}
