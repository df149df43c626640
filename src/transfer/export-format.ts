import type { ExportRecord, Restatement, StoredMemory, TombstoneRecord } from '../memory/types.js';

/**
 * The export file: JSON Lines (UTF-8, one JSON object per line, `\n` after each). The first line is a header;
 * then one line per memory (oldest first, expired ones included) and one per tombstone (a memory that was
 * corrected or forgotten, oldest first), with every stored field but the embedding, which an import computes
 * again (the importing service may use another model). README, "Export format", documents each field.
 *
 * Version 2 adds `restatements` to memory and tombstone lines: the texts kept as restating that memory (migration
 * 0017). A version 1 file, which has none, still imports.
 */
export const EXPORT_FORMAT = 'memory-service-export';
export const EXPORT_VERSION = 2;
/** The versions an import reads. */
export const READABLE_EXPORT_VERSIONS: readonly number[] = [1, EXPORT_VERSION];

export interface ExportHeader {
  readonly format: typeof EXPORT_FORMAT;
  readonly version: typeof EXPORT_VERSION;
  readonly exported_at: string;
}

export function exportHeader(now: Date): ExportHeader {
  return { format: EXPORT_FORMAT, version: EXPORT_VERSION, exported_at: now.toISOString() };
}

export function memoryLine(memory: StoredMemory) {
  return {
    type: 'memory' as const,
    memory_id: memory.id,
    text: memory.text,
    tags: [...memory.tags],
    importance: memory.importance,
    capture_mode: memory.captureMode,
    source_provider: memory.sourceProvider,
    session_id: memory.sessionId,
    created_at: memory.createdAt.toISOString(),
    updated_at: memory.updatedAt.toISOString(),
    last_confirmed_at: memory.lastConfirmedAt.toISOString(),
    expires_at: memory.expiresAt === null ? null : memory.expiresAt.toISOString(),
    embedding_model: memory.embeddingModel,
    restatements: memory.restatements.map(restatementLine),
  };
}

export function restatementLine(restatement: Restatement) {
  return {
    text: restatement.text,
    tags: [...restatement.tags],
    source_provider: restatement.sourceProvider,
    capture_mode: restatement.captureMode,
    session_id: restatement.sessionId,
    created_at: restatement.createdAt.toISOString(),
  };
}

export function tombstoneLine(tombstone: TombstoneRecord) {
  return {
    type: 'tombstone' as const,
    memory_id: tombstone.memoryId,
    text: tombstone.text,
    tags: [...tombstone.tags],
    reason: tombstone.reason,
    replaced_by: tombstone.replacedBy ?? null,
    note: tombstone.note ?? null,
    memory_created_at: tombstone.memoryCreatedAt.toISOString(),
    tombstoned_at: tombstone.tombstonedAt.toISOString(),
    embedding_model: tombstone.embeddingModel,
    restatements: tombstone.restatements.map(restatementLine),
  };
}

/** The file's lines, header first, each ending in `\n`; streamed as the records are read. */
export async function* exportLines(records: AsyncIterable<ExportRecord>, now = new Date()): AsyncGenerator<string> {
  yield `${JSON.stringify(exportHeader(now))}\n`;
  for await (const record of records) {
    yield `${JSON.stringify(record.kind === 'memory' ? memoryLine(record.memory) : tombstoneLine(record.tombstone))}\n`;
  }
}
