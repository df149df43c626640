import type {
  CaptureMode,
  ImportedTimestamps,
  ListPosition,
  MemoryFilters,
  MemoryRecord,
  NearMemory,
  NewMemory,
  Restatement,
  StoredMemory,
  StoredRestatement,
  TombstoneMatch,
  TombstonePosition,
  TombstoneReason,
  TombstoneRecord,
} from '../db/memories/records.js';
import type { SpaceRef } from '../spaces/spaces.js';

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
  Restatement,
  StoredMemory,
  StoredRestatement,
  TagMatch,
  TombstoneMatch,
  TombstonePosition,
  TombstoneReason,
  TombstoneRecord,
} from '../db/memories/records.js';
export type { ErasedRows } from '../db/erase-subject.js';

export type DedupPolicy = 'insert' | 'skip_if_near' | 'ask';

export interface RememberResult {
  /** The new memory, or under skip_if_near the one already stating the same fact. */
  readonly memoryId: number;
  readonly status: 'stored' | 'already_stored';
  /** The space it is stored in. */
  readonly space: SpaceRef;
  /** Already stored: the stored memory's text the incoming one was judged to state (kept as its restatement). */
  readonly matchedText: string | undefined;
  /** Live memories near the new text, best first (none under the insert policy, which does not look). */
  readonly nearDuplicates: readonly NearMemory[];
  /** Corrected or forgotten memories near the new text, nearest first (looked up only when it was stored). */
  readonly previouslyCorrected: readonly TombstoneMatch[];
}

/** A memory as recall and list return it. */
export interface Memory extends Omit<MemoryRecord, 'textChars' | 'spaceKey'> {
  /** True when `text` was cut to fit the character budget. */
  readonly textTruncated: boolean;
  /** The space it lives in. */
  readonly space: SpaceRef;
}

export interface RecalledMemory extends Memory {
  /** Fused rank score in (0, 1]; 1 = ranked first by every retriever. */
  readonly score: number;
  /** Its restatements that matched the query (nearer to it than the memory's text, or sharing its words), nearest first. */
  readonly matchedRestatements: readonly { readonly text: string; readonly textTruncated: boolean; readonly createdAt: Date }[];
}

export interface RecallRequest {
  readonly query: string;
  readonly limit: number;
  /** Budget on the total characters of memory text returned. */
  readonly maxChars: number;
  readonly filters: MemoryFilters;
  /** The spaces to search, by id or name; undefined: the personal space. */
  readonly spaces?: readonly string[] | undefined;
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
  /** The space to list, by id or name; undefined: the personal space. */
  readonly space?: string | undefined;
}

/** A memory as list returns it: with the texts kept as restating it, oldest first. */
export interface ListedMemory extends Memory {
  readonly restatements: readonly StoredRestatement[];
}

export interface ListResult {
  readonly memories: readonly ListedMemory[];
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
  readonly space: SpaceRef;
}

export interface ConfirmResult {
  readonly memoryId: number;
  readonly lastConfirmedAt: Date;
  readonly space: SpaceRef;
}

export interface ForgetResult {
  readonly memoryId: number;
  readonly space: SpaceRef;
}

export interface TombstonePage {
  /** Newest first. */
  readonly tombstones: readonly TombstoneRecord[];
  /** Where the next page starts; undefined on the last page. */
  readonly next: TombstonePosition | undefined;
}

export interface TagCount {
  readonly tag: string;
  /** Live memories carrying it. */
  readonly memories: number;
}

/** One record of an export, in file order: every memory (oldest first), then every tombstone (oldest first). */
export type ExportRecord = { readonly kind: 'memory'; readonly memory: StoredMemory } | { readonly kind: 'tombstone'; readonly tombstone: TombstoneRecord };

/** Where an import item came from, to report a refusal without repeating its text. */
export interface ImportSource {
  /** 1-based line of the file. */
  readonly line: number;
  /** Within the line, when one line gives several items (`observations[2]`). */
  readonly part?: string | undefined;
}

/**
 * What an import file holds, item by item, as its reader understood it: a memory, a tombstone, or something
 * the reader already refused (bad JSON, invalid fields) with the reason.
 */
export type ImportItem =
  | {
      readonly kind: 'memory';
      readonly source: ImportSource;
      /** Tags as given: checked for secrets, then normalised, like remember's. */
      readonly memory: NewMemory;
      /** The file's creation and update times, when it has them. */
      readonly timestamps: ImportedTimestamps | undefined;
      /** The id the memory had where it was exported, so the file's tombstones can point at it. */
      readonly formerId: number | undefined;
      /** Its restatements (export format 2), oldest first. */
      readonly restatements: readonly Restatement[];
    }
  | {
      readonly kind: 'tombstone';
      readonly source: ImportSource;
      readonly text: string;
      readonly tags: readonly string[];
      readonly reason: TombstoneReason;
      readonly note: string | undefined;
      readonly memoryCreatedAt: Date;
      readonly tombstonedAt: Date;
      readonly formerId: number | undefined;
      /** The former id of the memory that replaced it. */
      readonly formerReplacedBy: number | undefined;
      /** The restatements the tombstone keeps (export format 2). */
      readonly restatements: readonly Restatement[];
    }
  | { readonly kind: 'refused'; readonly source: ImportSource; readonly reason: string };

export interface ImportRefusal {
  readonly source: ImportSource;
  /** What was wrong (never the refused text itself). */
  readonly reason: string;
}

export interface ImportSummary {
  readonly memoriesImported: number;
  readonly tombstonesImported: number;
  /** Memories and tombstones already stored (the same text and tags; for tombstones, the same text, reason and time). */
  readonly duplicatesSkipped: number;
  readonly refused: number;
  /** The first refusals, in file order (at most MAX_REPORTED_REFUSALS). */
  readonly refusals: readonly ImportRefusal[];
  /**
   * Why the import stopped before the end (the embedding provider or the database failed); undefined when it
   * finished. Everything counted above is stored; running the same import again continues where it stopped.
   */
  readonly stoppedBy: { readonly code: string; readonly message: string } | undefined;
}
