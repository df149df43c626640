import { sql } from 'kysely';
import type { DbTransaction } from '../schema.js';

/** Serialises writers of one subject, so two identical concurrent skip_if_near calls cannot both insert. */
export async function lockSubjectForWrite(trx: DbTransaction, subject: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${subject}, 0))`.execute(trx);
}
