import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

/**
 * A conversation's turns in the order they were stored. Recall reads the turn after a memory in its conversation
 * (a reply with the question it answers, and what was said next after its best result); through the subject's
 * creation index that meant walking every later memory of the subject until one of the same session_id came, all
 * of them after a conversation's last turn. This index finds it in one probe. Partial: most memories are in no
 * conversation.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index memories_subject_session_idx on memories (subject, session_id, created_at, id) where session_id is not null`.execute(db);
}
