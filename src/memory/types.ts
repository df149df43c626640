export type CaptureMode = 'explicit' | 'inferred';
export type DedupPolicy = 'insert' | 'skip_if_near' | 'ask';
export type TombstoneReason = 'corrected' | 'forgotten';

/** A validated remember request (the tool layer has checked types, ranges and formats). */
export interface NewMemory {
  readonly text: string;
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
