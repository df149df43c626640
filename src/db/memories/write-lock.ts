import { sql, type RawBuilder } from 'kysely';
import type { DbTransaction } from '../schema.js';

/** Serialises writers of one subject, so two identical concurrent skip_if_near calls cannot both insert. */
export async function lockSubjectForWrite(trx: DbTransaction, subject: string): Promise<void> {
  await sql`select ${subjectWriteLock(subject)}`.execute(trx);
}

/** lockSubjectForWrite as an expression, for a statement that takes the lock along with reading something else. */
export function subjectWriteLock(subject: string): RawBuilder<unknown> {
  return sql`pg_advisory_xact_lock(hashtextextended(${subject}, 0))`;
}
