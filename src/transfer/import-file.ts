import type { MemoryService } from '../memory/memory-service.js';
import type { ImportItem, ImportRefusal, ImportSummary } from '../memory/types.js';
import { ImportLineReader } from './import-format.js';
import { fileLines } from './lines.js';

/** Longest line read; an MCP entity with many observations is one line. */
const MAX_LINE_BYTES = 32 * 1024 * 1024;

export interface ImportFileOptions {
  /** MaxTextChars: the longest text a line may carry. */
  readonly maxTextChars: number;
  /** Items embedded and stored together. */
  readonly batchSize: number;
  /** Embedding calls made at once for a batch (ImportOptions.streams). */
  readonly streams?: number;
  /** Told after every batch how far the file has been read and what happened so far. */
  readonly onProgress?: (progress: { readonly bytesRead: number; readonly summary: ImportSummary }) => void;
}

/** Imports a JSONL file (this service's export or an MCP memory server's memory.jsonl) into the subject's memories. */
export async function importFile(
  service: MemoryService,
  subject: string,
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options: ImportFileOptions,
): Promise<ImportSummary> {
  const reader = new ImportLineReader(options.maxTextChars);
  let bytesRead = 0;
  async function* items(): AsyncGenerator<ImportItem> {
    for await (const line of fileLines(source, MAX_LINE_BYTES)) {
      bytesRead = line.bytesRead;
      if (line.text === undefined) yield { kind: 'refused', source: { line: line.number }, reason: line.problem ?? 'unreadable' };
      else yield* reader.read(line.number, line.text);
    }
  }
  return service.import(subject, items(), {
    batchSize: options.batchSize,
    ...(options.streams === undefined ? {} : { streams: options.streams }),
    onBatch: (summary) => options.onProgress?.({ bytesRead, summary }),
  });
}

/** "line 12", "line 3, observations[1]". */
export function refusalPlace(refusal: ImportRefusal): string {
  return refusal.source.part === undefined ? `line ${refusal.source.line}` : `line ${refusal.source.line}, ${refusal.source.part}`;
}
