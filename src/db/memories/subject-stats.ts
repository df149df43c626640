import { sql, type RawBuilder } from 'kysely';
import type { DbTransaction } from '../schema.js';

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
}

export async function subjectSize(trx: DbTransaction, subject: string): Promise<SubjectSize> {
  const { rows } = await sql<SubjectSizeRow>`select ${subjectSizeColumns(subject)}`.execute(trx);
  return toSubjectSize(rows[0]);
}

/** subjectSize's select list, for a statement that reads it along with something else. */
export function subjectSizeColumns(subject: string): RawBuilder<unknown> {
  return sql`(select memories from subject_stats where subject = ${subject}) as memories,
             (select in_conversations from subject_stats where subject = ${subject}) as in_conversations,
             (select reltuples::float8 from pg_class where oid = to_regclass('memories')) as table_rows`;
}

export interface SubjectSizeRow {
  memories: string | number | null;
  in_conversations: string | number | null;
  table_rows: number | null;
}

export function toSubjectSize(row: SubjectSizeRow | undefined): SubjectSize {
  return {
    memories: Number(row?.memories ?? 0),
    tableRows: Math.max(0, Number(row?.table_rows ?? 0)),
    inConversations: Number(row?.in_conversations ?? 0),
  };
}
