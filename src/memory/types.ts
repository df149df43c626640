import type { CaptureMode, ListPosition, MemoryFilters, MemoryRecord, NearMemory, TombstoneMatch } from '../db/memories/records.js';

/**
 * What the memory service takes and returns: domain values (camelCase, Dates, unrounded numbers), no wire
 * shapes and no messages. The tools present them (src/tools/).
 */
export type {
  CaptureMode,
  ListPosition,
  MemoryFilters,
  NearMemory,
  NewMemory,
  TagMatch,
  TombstoneMatch,
  TombstoneReason,
} from '../db/memories/records.js';

export type DedupPolicy = 'insert' | 'skip_if_near' | 'ask';

export interface RememberResult {
  /** The new memory, or under skip_if_near the one already stating the same fact. */
  readonly memoryId: number;
  readonly status: 'stored' | 'already_stored';
  /** Live memories near the new text, best first (none under the insert policy, which does not look). */
  readonly nearDuplicates: readonly NearMemory[];
  /** Corrected or forgotten memories near the new text, nearest first (looked up only when it was stored). */
  readonly previouslyCorrected: readonly TombstoneMatch[];
}

/** A memory as recall and list return it. */
export interface Memory extends Omit<MemoryRecord, 'textChars'> {
  /** True when `text` was cut to fit the character budget. */
  readonly textTruncated: boolean;
}

export interface RecalledMemory extends Memory {
  /** Fused rank score in (0, 1]; 1 = ranked first by every retriever. */
  readonly score: number;
}

export interface RecallRequest {
  readonly query: string;
  readonly limit: number;
  /** Budget on the total characters of memory text returned. */
  readonly maxChars: number;
  readonly filters: MemoryFilters;
}

/** Why a result list is shorter than everything that matched: more ranked below the limit, or the budget ran out. */
export type CutBy = 'limit' | 'max_chars';

export interface RecallResult {
  readonly memories: readonly RecalledMemory[];
  /** Undefined when nothing was left out. */
  readonly cutBy: CutBy | undefined;
}

export interface ListRequest {
  readonly limit: number;
  readonly maxChars: number;
  /** Where the previous page ended; undefined for the first page. */
  readonly after: ListPosition | undefined;
  readonly includeExpired: boolean;
  readonly filters: MemoryFilters;
}

export interface ListResult {
  readonly memories: readonly Memory[];
  /** Where the next page starts; undefined on the last page. */
  readonly next: ListPosition | undefined;
  /** True when the page ended early because the character budget ran out. */
  readonly cutByBudget: boolean;
}

/** Fields a correction may set; absent tags and importance are carried over from the corrected memory. */
export interface Correction {
  readonly text: string;
  /** As given (see NewMemory.tags); undefined keeps the corrected memory's tags. */
  readonly tags: readonly string[] | undefined;
  readonly importance: number | undefined;
  readonly sourceProvider: string | undefined;
  readonly captureMode: CaptureMode | undefined;
  readonly sessionId: string | undefined;
  readonly expiresAt: Date | undefined;
  /** Why it changed; kept with the tombstone. */
  readonly note: string | undefined;
}

export interface CorrectResult {
  /** The new memory holding the corrected fact. */
  readonly memoryId: number;
  readonly replacedMemoryId: number;
}

export interface ConfirmResult {
  readonly memoryId: number;
  readonly lastConfirmedAt: Date;
}

export interface ForgetResult {
  readonly memoryId: number;
}
