import type { ColumnType, RawBuilder, Transaction } from 'kysely';

/** Timestamps are written as Date or ISO strings and always read back as Date. */
type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** pgvector values are written as the text form '[x,y,...]' and rarely read back. */
type Vector = ColumnType<string, string, string>;
/**
 * bigint identity columns (`generated always`: never inserted or updated). pg returns int8 as a string and the
 * storage functions convert it; a number is accepted wherever an id is compared.
 */
type BigId = ColumnType<string | number, never, never>;

export interface MemoriesTable {
  id: BigId;
  subject: string;
  text: string;
  tags: ColumnType<string[], string[] | undefined, string[]>;
  source_provider: string | null;
  importance: ColumnType<number, number | undefined, number>;
  capture_mode: 'explicit' | 'inferred' | null;
  session_id: string | null;
  expires_at: Timestamp | null;
  last_confirmed_at: ColumnType<Date, Date | string | undefined, Date | string>;
  embedding: Vector;
  embedding_model: string;
  embedding_dimensions: number;
  /** One vector per passage of a text of several (migration 0013); empty for one passage, null until it is split (again, after 0014). */
  passage_embeddings: ColumnType<string | null, RawBuilder<string> | undefined, RawBuilder<string>>;
  search_vector: ColumnType<string, never, never>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** Who wrote it, when not the space's own subject (a member of a shared space; migration 0020). */
  author: ColumnType<string | null, string | null | undefined, never>;
}

/** A space made to be shared (migration 0020); a subject's personal space has no row (its key is the subject). */
export interface SpacesTable {
  /** The space's key, `space:<id>`: the `subject` of its memories. */
  id: string;
  name: string;
  owner: string;
  /** Members of this group (the external authorization server's membership claim) have external_role. */
  external_group: string | null;
  external_role: 'reader' | 'writer' | null;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

export interface SpaceMembersTable {
  space_id: string;
  member: string;
  role: 'reader' | 'writer';
  added_at: ColumnType<Date, Date | string | undefined, never>;
}

export interface TombstonesTable {
  id: BigId;
  memory_id: ColumnType<string | number, number, never>;
  subject: string;
  text: string;
  tags: ColumnType<string[], string[] | undefined, never>;
  embedding: Vector;
  embedding_model: string;
  embedding_dimensions: number;
  reason: 'corrected' | 'forgotten';
  replaced_by: ColumnType<string | number | null, number | null | undefined, never>;
  memory_created_at: ColumnType<Date, Date | string, never>;
  tombstoned_at: ColumnType<Date, Date | string | undefined, never>;
  note: ColumnType<string | null, string | null | undefined, never>;
  /** Whether `embedding` is made as every vector is now, from the text's passages (migration 0015); reembed redoes the rest. */
  whole_from_passages: boolean;
  /** The memory's restatements when it was tombstoned (migration 0017): RestatementJson objects, oldest first. */
  restatements: ColumnType<RestatementJson[], string | undefined, never>;
}

/** A restatement as a tombstone keeps it: every field but its vector, created_at as ISO text. */
export interface RestatementJson {
  text: string;
  tags: string[];
  source_provider: string | null;
  capture_mode: 'explicit' | 'inferred' | null;
  session_id: string | null;
  created_at: string;
}

/** Texts remember judged to state a stored memory, kept verbatim (migration 0017); they go with their memory. */
export interface MemoryRestatementsTable {
  id: BigId;
  memory_id: ColumnType<string | number, number, never>;
  subject: string;
  text: string;
  tags: ColumnType<string[], string[] | undefined, never>;
  source_provider: string | null;
  capture_mode: 'explicit' | 'inferred' | null;
  session_id: string | null;
  embedding: Vector;
  embedding_model: string;
  embedding_dimensions: number;
  search_vector: ColumnType<string, never, never>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
}

/** Written only by the memories_terms_sync trigger; read by the full-text ranking. */
export interface MemoryTermsTable {
  subject: ColumnType<string, never, never>;
  lexeme: ColumnType<string, never, never>;
  memory_id: ColumnType<string | number, never, never>;
  /** ts_rank of the lexeme in the memory (migration 0009). */
  rank: ColumnType<number, never, never>;
}

/** Memories whose memory_terms rows are being written in steps (migration 0012), and how many are written. */
export interface MemoryTermsPendingTable {
  memory_id: ColumnType<string | number, never, never>;
  subject: ColumnType<string, never, never>;
  written: ColumnType<number, never, never>;
}

/** How often each memory was recalled (migration 0019); rows go with their memory by trigger. */
export interface MemoryRecallsTable {
  memory_id: ColumnType<string | number, number, never>;
  subject: ColumnType<string, string, never>;
  recalls: ColumnType<number, number | undefined, number>;
  last_recalled_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** Kept by triggers on memories; read by recall. */
export interface SubjectStatsTable {
  subject: ColumnType<string, never, never>;
  memories: ColumnType<string | number, never, never>;
  /** Of those, the ones with a session_id (migration 0016). */
  in_conversations: ColumnType<string | number, never, never>;
  /** The bytes of their texts, UTF-8 (migration 0018): the quota's measure. */
  text_bytes: ColumnType<string | number, never, never>;
  /** Restatements of its memories (migration 0017). */
  restatements: ColumnType<string | number, never, never>;
}

/**
 * The built-in authorization server's objects (migration 0007), one generation of the state file each. Visible
 * only in the authorization server's transactions (withAuthorizationServer), never in a subject's.
 */
export interface OAuthObjectsTable {
  generation: string;
  /** oidc-provider's model name: Client, Grant, RefreshToken, AuthorizationCode, Session, Interaction, … */
  kind: string;
  /** SHA-256 of oidc-provider's id (base64url): a stored row never holds a usable code or refresh token. */
  id: string;
  payload: ColumnType<Record<string, unknown>, string, string>;
  uid: string | null;
  grant_id: string | null;
  /** The client address that started an interaction (per-address caps). */
  address: string | null;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  /** Clients: when one last obtained a token; null while it never has. */
  used_at: Timestamp | null;
  expires_at: Timestamp;
}

/** Sessions of the web page (migration 0008); not subject-scoped by row-level security. */
export interface WebSessionsTable {
  id_hash: string;
  subject: string;
  scopes: string;
  /** The membership claim's values of the token it was signed in with (migration 0021). */
  groups: ColumnType<string[], string[] | undefined, never>;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  last_seen_at: ColumnType<Date, Date | string | undefined, Date | string>;
  expires_at: ColumnType<Date, Date | string, Date | string>;
}

export interface Database {
  memories: MemoriesTable;
  tombstones: TombstonesTable;
  memory_restatements: MemoryRestatementsTable;
  memory_terms: MemoryTermsTable;
  memory_terms_pending: MemoryTermsPendingTable;
  memory_recalls: MemoryRecallsTable;
  subject_stats: SubjectStatsTable;
  spaces: SpacesTable;
  space_members: SpaceMembersTable;
  oauth_objects: OAuthObjectsTable;
  web_sessions: WebSessionsTable;
}

/** The one transaction type: every storage function runs inside a subject-scoped transaction of this shape. */
export type DbTransaction = Transaction<Database>;
