import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

const TABLES = ['memories', 'tombstones', 'memory_terms', 'subject_stats'];

/**
 * Row-level security no longer reads any subject as "every subject". The subject comes from a token, and the
 * subject '*' admitted every row: a token whose `sub` was "*" switched the second line of defence off.
 * Maintenance (re-embedding) and operators now ask for every subject with a setting of its own,
 * `memory_service.all_subjects = 'on'`, which the service sets only in its maintenance transactions and which
 * nothing a token carries can reach.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) {
    await sql`
      alter policy ${sql.id(`${table}_subject_isolation`)} on ${sql.table(table)}
        using (subject = current_setting('memory_service.subject', true)
               or current_setting('memory_service.all_subjects', true) = 'on')
        with check (subject = current_setting('memory_service.subject', true)
                    or current_setting('memory_service.all_subjects', true) = 'on')`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) {
    await sql`
      alter policy ${sql.id(`${table}_subject_isolation`)} on ${sql.table(table)}
        using (subject = current_setting('memory_service.subject', true)
               or current_setting('memory_service.subject', true) = '*')
        with check (subject = current_setting('memory_service.subject', true)
                    or current_setting('memory_service.subject', true) = '*')`.execute(db);
  }
}
