import { subjectUsage, type SubjectUsage } from '../db/memories/subject-stats.js';
import type { DbTransaction } from '../db/schema.js';
import { quotaExceeded } from '../errors.js';

/** What one subject may keep (MaxMemoriesPerSubject, MaxBytesPerSubject): memories, and UTF-8 bytes of their texts; 0 is no limit. */
export interface SubjectQuota {
  readonly memories: number;
  readonly textBytes: number;
}

export const NO_QUOTA: SubjectQuota = { memories: 0, textBytes: 0 };

/** MaxMemoriesPerSubject's default: years of daily use; about 350 MB of database with its vectors and words. */
export const DEFAULT_MAX_MEMORIES_PER_SUBJECT = 50_000;
/** MaxBytesPerSubject's default, 50 MiB of text: 50,000 memories of 1,000 bytes. */
export const DEFAULT_MAX_BYTES_PER_SUBJECT = 50 * 1024 * 1024;

export const textBytesOf = (text: string): number => Buffer.byteLength(text, 'utf8');

/**
 * Why `usage` plus one more text of `textBytes` would pass `quota`; undefined when it fits. A restatement adds
 * bytes but no memory.
 */
export function quotaProblem(quota: SubjectQuota, usage: SubjectUsage, textBytes: number, adds: 'memory' | 'restatement' = 'memory'): string | undefined {
  if (adds === 'memory' && quota.memories > 0 && usage.memories + 1 > quota.memories) {
    return `not stored: you keep ${usage.memories} memories, the most one person may keep here (MaxMemoriesPerSubject); forget some first`;
  }
  if (quota.textBytes > 0 && usage.textBytes + textBytes > quota.textBytes) {
    return `not stored: your memories hold ${usage.textBytes} bytes of text and this one ${textBytes} more, past the ${quota.textBytes} one person may keep here (MaxBytesPerSubject); forget some first`;
  }
  return undefined;
}

/**
 * Throws QUOTA_EXCEEDED when one more memory (or restatement) of `text` would pass the subject's quota. Called under the subject's
 * write lock, so two writes cannot both take the last place.
 */
export async function checkQuota(trx: DbTransaction, subject: string, quota: SubjectQuota, text: string, adds: 'memory' | 'restatement' = 'memory'): Promise<void> {
  if (quota.memories === 0 && quota.textBytes === 0) return;
  const problem = quotaProblem(quota, await subjectUsage(trx, subject), textBytesOf(text), adds);
  if (problem !== undefined) throw quotaExceeded(problem);
}
