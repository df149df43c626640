import { sql } from 'kysely';
import type { DbTransaction } from './schema.js';

/** The SQL of the web page's sessions (migration 0008). The cookie's value never reaches the database. */

export interface WebSessionRecord {
  readonly subject: string;
  readonly scopes: readonly string[];
  /** The membership claim's values of the token it was signed in with; empty when none. */
  readonly groups: readonly string[];
  readonly createdAt: Date;
}

export interface NewWebSession {
  /** A keyed hash of the cookie's value. */
  readonly idHash: string;
  readonly subject: string;
  readonly scopes: readonly string[];
  readonly groups: readonly string[];
  /** Absolute end, whatever the activity. */
  readonly expiresAt: Date;
}

export async function insertWebSession(trx: DbTransaction, session: NewWebSession): Promise<void> {
  await trx
    .insertInto('web_sessions')
    .values({ id_hash: session.idHash, subject: session.subject, scopes: session.scopes.join(' '), groups: [...session.groups], expires_at: session.expiresAt })
    .execute();
}

/**
 * The live session with this hash, marked as seen now; undefined when there is none, it has ended, or it was
 * idle for `idleSeconds`.
 */
export async function useWebSession(trx: DbTransaction, idHash: string, idleSeconds: number): Promise<WebSessionRecord | undefined> {
  const row = await trx
    .updateTable('web_sessions')
    .set({ last_seen_at: sql<Date>`now()` })
    .where('id_hash', '=', idHash)
    .where('expires_at', '>', sql<Date>`now()`)
    .where('last_seen_at', '>', sql<Date>`now() - make_interval(secs => ${idleSeconds})`)
    .returning(['subject', 'scopes', 'groups', 'created_at'])
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return { subject: row.subject, scopes: row.scopes.split(' ').filter((scope) => scope !== ''), groups: row.groups, createdAt: row.created_at };
}

export async function deleteWebSession(trx: DbTransaction, idHash: string): Promise<void> {
  await trx.deleteFrom('web_sessions').where('id_hash', '=', idHash).execute();
}

/**
 * Deletes up to `limit` ended or idle sessions of anyone, and the subject's oldest sessions beyond its `keep`
 * newest: a sign-in tidies up, so the table stays bounded without a timer.
 */
export async function pruneWebSessions(trx: DbTransaction, subject: string, options: { idleSeconds: number; keep: number; limit: number }): Promise<void> {
  await sql`
    delete from web_sessions
     where id_hash in (select id_hash from web_sessions
                        where expires_at <= now() or last_seen_at <= now() - make_interval(secs => ${options.idleSeconds})
                        limit ${options.limit})`.execute(trx);
  await sql`
    delete from web_sessions
     where id_hash in (select id_hash from web_sessions where subject = ${subject}
                        order by created_at desc offset ${options.keep})`.execute(trx);
}
