import type { MemoryRecord } from '../db/memories/records.js';
import type { SpaceRef } from '../spaces/spaces.js';
import type { Memory } from './types.js';

/** Number of Unicode code points in `value` (not UTF-16 code units): characters as max_chars counts them. */
export const codePointLength = (value: string): number => [...value].length;

/** The first of `items` whose texts fit in `budget` characters together (none cut). */
export function fitTexts<T extends { readonly text: string }>(items: readonly T[], budget: number): T[] {
  const kept: T[] = [];
  let left = budget;
  for (const item of items) {
    const chars = codePointLength(item.text);
    if (chars > left) break;
    kept.push(item);
    left -= chars;
  }
  return kept;
}

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
