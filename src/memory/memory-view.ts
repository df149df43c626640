import type { MemoryRow } from './recall-repository.js';
import type { MemoryView } from './types.js';

export function toView(row: MemoryRow, truncated: boolean): MemoryView {
  return {
    memory_id: row.id,
    text: row.text,
    ...(truncated ? { text_truncated: true as const } : {}),
    tags: row.tags,
    importance: row.importance,
    capture_mode: row.captureMode,
    source_provider: row.sourceProvider,
    session_id: row.sessionId,
    created_at: row.createdAt.toISOString(),
    last_confirmed_at: row.lastConfirmedAt.toISOString(),
    expires_at: row.expiresAt === null ? null : row.expiresAt.toISOString(),
  };
}

/**
 * Takes rows in order while their texts fit in `maxChars` characters in total; the first row that does not
 * fit ends the list (order is never skipped over). A first row longer than the whole budget is returned cut
 * to it (its text was already cut in SQL), so a match is never hidden by its size alone.
 */
export function fitToBudget<T extends MemoryRow>(rows: readonly T[], maxChars: number): { kept: { row: T; truncated: boolean }[]; cut: boolean } {
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
