import { sql, type RawBuilder } from 'kysely';
import type { DbTransaction } from '../schema.js';
import { inSpaces, type SpaceKeys } from './filters.js';

/** The subject's number of memories, expired ones included, as kept by triggers (migration 0005). */
export async function subjectMemoryCount(trx: DbTransaction, subject: string): Promise<number> {
  const { rows } = await sql<{ memories: string | number }>`select memories from subject_stats where subject = ${subject}`.execute(trx);
  return Number(rows[0]?.memories ?? 0);
}

/** What the rankings choose their plans by, read in one statement. */
export interface SubjectSize {
  /** The subject's number of memories, expired ones included (subject_stats). */
  readonly memories: number;
  /** The planner's estimate of the whole table's rows; 0 when it has none (never analysed, as PGlite may be). */
  readonly tableRows: number;
  /** How many of the subject's memories have a session_id, expired ones included (subject_stats). */
  readonly inConversations: number;
  /** How many restatements the subject's memories have (subject_stats, migration 0017). */
  readonly restatements: number;
}

export async function subjectSize(trx: DbTransaction, spaces: SpaceKeys): Promise<SubjectSize> {
  const { rows } = await subjectSizeQuery(spaces).execute(trx);
  return toSubjectSize(rows[0]);
}

/**
 * subjectSize's query, one row (the counts null when the spaces have no memories yet), for a statement that reads
 * it along with something else. Each space's subject_stats row is looked up once for all its counts; several
 * spaces' counts are added up (a recall over several spaces ranks them as one set).
 */
export function subjectSizeQuery(spaces: SpaceKeys): RawBuilder<SubjectSizeRow> {
  return sql<SubjectSizeRow>`
    select sum(stats.memories) as memories, sum(stats.in_conversations) as in_conversations, sum(stats.restatements) as restatements,
           (select reltuples::float8 from pg_class where oid = to_regclass('memories')) as table_rows
      from subject_stats as stats
     where ${inSpaces('stats.subject', spaces)}`;
}

export interface SubjectSizeRow {
  memories: string | number | null;
  in_conversations: string | number | null;
  restatements: string | number | null;
  table_rows: number | null;
}

export function toSubjectSize(row: SubjectSizeRow | undefined): SubjectSize {
  return {
    memories: Number(row?.memories ?? 0),
    tableRows: Math.max(0, Number(row?.table_rows ?? 0)),
    inConversations: Number(row?.in_conversations ?? 0),
    restatements: Number(row?.restatements ?? 0),
  };
}

export interface SubjectUsage {
  readonly memories: number;
  readonly textBytes: number;
}

/** The subject's memories and their texts' bytes, as kept by triggers (migrations 0005, 0018). */
export async function subjectUsage(trx: DbTransaction, subject: string): Promise<SubjectUsage> {
  const { rows } = await sql<{ memories: string | number; text_bytes: string | number }>`
    select memories, text_bytes from subject_stats where subject = ${subject}`.execute(trx);
  return { memories: Number(rows[0]?.memories ?? 0), textBytes: Number(rows[0]?.text_bytes ?? 0) };
}
