import type { MemoryRecord } from '../db/memories/records.js';
import type { SpaceRef } from '../spaces/spaces.js';
import type { Memory } from './types.js';

/**
 * Takes rows in order while their texts fit in `maxChars` characters in total; the first row that does not
 * fit ends the list (order is never skipped over). A first row longer than the whole budget is returned cut
 * to it (its text was already cut in SQL), so a match is never hidden by its size alone.
 */
export function fitToBudget<T extends { readonly textChars: number }>(
  rows: readonly T[],
  maxChars: number,
): { kept: { row: T; truncated: boolean }[]; cut: boolean } {
  const kept: { row: T; truncated: boolean }[] = [];
  let used = 0;
  for (const row of rows) {
    if (used + row.textChars <= maxChars) {
      kept.push({ row, truncated: false });
      used += row.textChars;
    } else {
      if (kept.length === 0) kept.push({ row, truncated: true });
      return { kept, cut: true };
    }
  }
  return { kept, cut: false };
}

export function toMemory(record: MemoryRecord, truncated: boolean, space: SpaceRef): Memory {
  return {
    id: record.id,
    text: record.text,
    textTruncated: truncated,
    tags: record.tags,
    importance: record.importance,
    captureMode: record.captureMode,
    sourceProvider: record.sourceProvider,
    sessionId: record.sessionId,
    createdAt: record.createdAt,
    lastConfirmedAt: record.lastConfirmedAt,
    expiresAt: record.expiresAt,
    space,
    author: record.author,
  };
}
