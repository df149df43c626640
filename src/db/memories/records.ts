/**
 * The shapes the storage functions take and return: camelCase, Dates and plain numbers, converted from the
 * driver's rows (int8 as text, numeric as text) here, so nothing above the storage folder sees a raw row.
 */
export type CaptureMode = 'explicit' | 'inferred';
export type TombstoneReason = 'corrected' | 'forgotten';
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

/** A memory to insert (validated by the caller). */
export interface NewMemory {
  readonly text: string;
  readonly tags: readonly string[];
  readonly sourceProvider: string | undefined;
  readonly importance: number;
  readonly captureMode: CaptureMode | undefined;
  readonly sessionId: string | undefined;
  readonly expiresAt: Date | undefined;
  /** Undefined: the insertion time. */
  readonly lastConfirmedAt: Date | undefined;
  /** Who wrote it, when not the space's own subject (a member of a shared space); undefined: the space's subject. */
  readonly author?: string | undefined;
}

/** A stored memory as recall and list_memories read it. */
export interface MemoryRecord {
  readonly id: number;
  /** At most the `maxChars` asked for: cut in SQL, so a huge text never travels. */
  readonly text: string;
  /** The whole text's length in characters. */
  readonly textChars: number;
  readonly tags: readonly string[];
  readonly importance: number;
  readonly captureMode: CaptureMode | null;
  readonly sourceProvider: string | null;
  readonly sessionId: string | null;
  readonly createdAt: Date;
  readonly lastConfirmedAt: Date;
  readonly expiresAt: Date | null;
  /** The key of the space it lives in (its `subject` column). */
  readonly spaceKey: string;
  /** Who wrote it, when not the space's own subject (a member of a shared space). */
  readonly author: string | null;
}

/** A live memory near a new text (remember's near-duplicates). */
export interface NearMemory {
  readonly id: number;
  readonly text: string;
  /** Cosine similarity, 1 = same direction. */
  readonly similarity: number;
  readonly tags: readonly string[];
  readonly createdAt: Date;
  readonly lastConfirmedAt: Date;
}

/** A tombstone near a new text: a memory that was corrected or forgotten. */
export interface TombstoneMatch {
  /** The id the memory had. */
  readonly memoryId: number;
  /** Its old text. */
  readonly text: string;
  readonly reason: TombstoneReason;
  /** The memory that replaced it (corrected). */
  readonly replacedBy: number | undefined;
  /** Why it was corrected or forgotten, when a reason was given. */
  readonly note: string | undefined;
  readonly similarity: number;
  readonly tombstonedAt: Date;
}

/** A text remember kept as stating a stored memory (migration 0017): its fields but its vector. */
export interface Restatement {
  readonly text: string;
  readonly tags: readonly string[];
  readonly sourceProvider: string | null;
  readonly captureMode: CaptureMode | null;
  readonly sessionId: string | null;
  readonly createdAt: Date;
}

/** A stored restatement: its row id and its memory's. */
export interface StoredRestatement extends Restatement {
  readonly id: number;
  readonly memoryId: number;
}

/** What a tombstone keeps of the memory it replaces. */
export interface RemovedMemory {
  readonly id: number;
  readonly text: string;
  readonly tags: readonly string[];
  readonly importance: number;
  readonly embedding: string;
  readonly embeddingModel: string;
  readonly embeddingDimensions: number;
  /** Its whole vector was made from its passages (since 0014); false for a memory that awaits reembed. */
  readonly wholeFromPassages: boolean;
  readonly createdAt: Date;
  /** Its restatements, oldest first: the tombstone keeps them. */
  readonly restatements: readonly Restatement[];
}

/** Where a list page ends: created_at to the microsecond (UTC text; a Date would lose the microseconds) and id. */
export interface ListPosition {
  readonly createdAt: string;
  readonly id: number;
}

/** Every stored field of a memory but its vector: what an export carries. */
export interface StoredMemory {
  readonly id: number;
  readonly text: string;
  readonly tags: readonly string[];
  readonly importance: number;
  readonly captureMode: CaptureMode | null;
  readonly sourceProvider: string | null;
  readonly sessionId: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly lastConfirmedAt: Date;
  readonly expiresAt: Date | null;
  readonly embeddingModel: string;
  /** Its restatements, oldest first. */
  readonly restatements: readonly Restatement[];
}

/** Every stored field of a tombstone but its vector. */
export interface TombstoneRecord {
  /** The id the memory had. */
  readonly memoryId: number;
  /** Its text. */
  readonly text: string;
  readonly tags: readonly string[];
  readonly reason: TombstoneReason;
  /** The memory that replaced it (corrected). */
  readonly replacedBy: number | undefined;
  readonly note: string | undefined;
  readonly memoryCreatedAt: Date;
  readonly tombstonedAt: Date;
  readonly embeddingModel: string;
  /** The memory's restatements when it was tombstoned, oldest first. */
  readonly restatements: readonly Restatement[];
}

/** Where a page of tombstones ends: tombstoned_at to the microsecond (UTC text) and the tombstone's row id. */
export interface TombstonePosition {
  readonly tombstonedAt: string;
  readonly id: number;
}

/** Timestamps an imported memory keeps from its file. */
export interface ImportedTimestamps {
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A tombstone read from a file, its replacement already mapped to this database's ids. */
export type ImportedTombstone = Omit<TombstoneRecord, 'memoryId' | 'embeddingModel'>;
