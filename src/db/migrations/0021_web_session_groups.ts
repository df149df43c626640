import { sql, type Kysely } from 'kysely';

// Frozen in time: never import application code here.

/**
 * The membership claim's values (OAuthMembershipClaim) of the token a web session was signed in with: the page
 * acts with them, so a space reached through an external group shows there as it does through the tools. Empty
 * for sessions from before, and with no claim configured.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table web_sessions add column groups text[] not null default '{}'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table web_sessions drop column groups`.execute(db);
}
