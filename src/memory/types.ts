export type CaptureMode = 'explicit' | 'inferred';
export type DedupPolicy = 'insert' | 'skip_if_near' | 'ask';
export type TombstoneReason = 'corrected' | 'forgotten';

/** A validated remember request (the tool layer has checked types, ranges and formats). */
export interface NewMemory {
  readonly text: string;
  /** As the caller gave them: the service checks them for secrets, then normalises them (tags.ts). */
  readonly tags: readonly string[];
  readonly sourceProvider: string | undefined;
  readonly importance: number;
  readonly captureMode: CaptureMode | undefined;
  readonly sessionId: string | undefined;
  readonly expiresAt: Date | undefined;
  readonly lastConfirmedAt: Date | undefined;
}

export interface NearDuplicate {
  readonly memory_id: number;
  readonly text: string;
  readonly similarity: number;
  readonly tags: string[];
  readonly created_at: string;
  readonly last_confirmed_at: string;
}

export interface PreviouslyCorrected {
  readonly memory_id: number;
  readonly text: string;
  readonly reason: TombstoneReason;
  readonly replaced_by?: number;
  /** The reason given to forget or correct, when one was. */
  readonly note?: string;
  readonly similarity: number;
  readonly tombstoned_at: string;
}

export interface RememberOutcome {
  readonly ok: true;
  readonly memory_id: number;
  readonly message: string;
  readonly near_duplicates?: NearDuplicate[];
  readonly previously_corrected?: PreviouslyCorrected[];
}

export type TagMatch = 'any' | 'all';

/** Filters shared by recall and list_memories; absent fields do not filter. */
export interface MemoryFilters {
  /** Normalised tags; empty = no tag filter. */
  readonly tags: readonly string[];
  readonly tagMatch: TagMatch;
  readonly sessionId: string | undefined;
  readonly captureMode: CaptureMode | undefined;
  readonly sourceProvider: string | undefined;
  /** created_at >= createdAfter. */
  readonly createdAfter: Date | undefined;
  /** created_at < createdBefore. */
  readonly createdBefore: Date | undefined;
}

/** A memory as recall and list_memories return it. */
export interface MemoryView {
  readonly memory_id: number;
  readonly text: string;
  /** Present (true) only when the text was cut to fit max_chars. */
  readonly text_truncated?: true;
  readonly tags: string[];
  readonly importance: number;
  readonly capture_mode: CaptureMode | null;
  readonly source_provider: string | null;
  readonly session_id: string | null;
  readonly created_at: string;
  readonly last_confirmed_at: string;
  readonly expires_at: string | null;
}

export interface RecalledMemory extends MemoryView {
  /** Fused rank score in (0, 1]; 1 = ranked first by every retriever. */
  readonly score: number;
}

/** Which retrievers recall uses; only benchmarks ask for a single one. */
export type RecallStrategy = 'hybrid' | 'vector' | 'text';

export interface RecallRequest {
  readonly query: string;
  readonly limit: number;
  readonly maxChars: number;
  readonly filters: MemoryFilters;
}

/** Why a result list is shorter than everything that matched: null when nothing was left out. */
export type CutBy = 'limit' | 'max_chars' | null;

export interface RecallOutcome {
  readonly ok: true;
  readonly memories: RecalledMemory[];
  readonly cut_by: CutBy;
  readonly message: string;
}

export interface ListRequest {
  readonly limit: number;
  readonly maxChars: number;
  readonly cursor: ListCursor | undefined;
  readonly includeExpired: boolean;
  readonly filters: MemoryFilters;
}

/** Position after the last memory of a page: its created_at (microsecond text) and id. */
export interface ListCursor {
  readonly createdAt: string;
  readonly id: number;
}

export interface ListOutcome {
  readonly ok: true;
  readonly memories: MemoryView[];
  /** Pass it back as `cursor` for the next page; null on the last page. */
  readonly next_cursor: string | null;
  readonly message: string;
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
  readonly note: string | undefined;
}
