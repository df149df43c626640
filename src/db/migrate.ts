import { Migrator, sql, type Kysely, type Migration, type MigrationResultSet } from 'kysely';
import * as initial from './migrations/0001_initial.js';
import * as tombstoneNote from './migrations/0002_tombstone_note.js';
import * as inlineVectors from './migrations/0003_inline_vectors.js';
import * as memoryTerms from './migrations/0004_memory_terms.js';
import * as subjectStats from './migrations/0005_subject_stats.js';
import { createVectorIndexStatement, isIndexable } from './pgvector.js';
import * as allSubjectsSetting from './migrations/0006_all_subjects_setting.js';
import * as oauthObjects from './migrations/0007_oauth_objects.js';
import * as webSessions from './migrations/0008_web_sessions.js';
import * as largeSubjects from './migrations/0009_large_subjects.js';
import * as termsWithoutForeignKey from './migrations/0011_terms_without_foreign_key.js';
import * as termsInSteps from './migrations/0012_terms_in_steps.js';
import * as passageVectors from './migrations/0013_passage_vectors.js';
import * as wholeFromPassages from './migrations/0014_whole_from_passages.js';
import * as tombstoneWholeFromPassages from './migrations/0015_tombstone_whole_from_passages.js';
import * as conversationCount from './migrations/0016_conversation_count.js';
import * as memoryRestatements from './migrations/0017_memory_restatements.js';
import * as subjectTextBytes from './migrations/0018_subject_text_bytes.js';
import * as brief from './migrations/0019_brief.js';
import * as spaces from './migrations/0020_spaces.js';
import * as webSessionGroups from './migrations/0021_web_session_groups.js';
import * as spaceRolesOnceAStatement from './migrations/0022_space_roles_once_a_statement.js';
import * as conversationOrder from './migrations/0023_conversation_order.js';
import type { Database } from './schema.js';

/** Migrations are listed statically so the compiled build needs no file-system discovery. */
const migrations: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_tombstone_note': tombstoneNote,
  '0003_inline_vectors': inlineVectors,
  '0004_memory_terms': memoryTerms,
  '0005_subject_stats': subjectStats,
  '0006_all_subjects_setting': allSubjectsSetting,
  '0007_oauth_objects': oauthObjects,
  '0008_web_sessions': webSessions,
  '0009_large_subjects': largeSubjects,
  '0011_terms_without_foreign_key': termsWithoutForeignKey,
  '0012_terms_in_steps': termsInSteps,
  '0013_passage_vectors': passageVectors,
  '0014_whole_from_passages': wholeFromPassages,
  '0015_tombstone_whole_from_passages': tombstoneWholeFromPassages,
  '0016_conversation_count': conversationCount,
  '0017_memory_restatements': memoryRestatements,
  '0018_subject_text_bytes': subjectTextBytes,
  '0019_brief': brief,
  '0020_spaces': spaces,
  '0021_web_session_groups': webSessionGroups,
  '0022_space_roles_once_a_statement': spaceRolesOnceAStatement,
  '0023_conversation_order': conversationOrder,
};

export const latestMigration = Object.keys(migrations).sort().at(-1)!;

export function createMigrator(db: Kysely<Database>, schema: string): Migrator {
  return new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableSchema: schema,
  });
}

export async function migrateToLatest(db: Kysely<Database>, schema: string): Promise<MigrationResultSet> {
  await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  return createMigrator(db, schema).migrateToLatest();
}

/**
 * Runs `fn` (migrations and the other one-time preparations) while holding a lock per schema, so that several
 * processes starting together against one database (replicas) prepare it one after the other: concurrent
 * `create schema/index/role if not exists` collide on PostgreSQL's catalogs. `fn` gets the locked connection.
 */
export async function oneProcessAtATime<T>(db: Kysely<Database>, schema: string, fn: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  const key = `memory-service prepares schema ${schema}`;
  return db.connection().execute(async (connection) => {
    await sql`select pg_advisory_lock(hashtext(${key}))`.execute(connection);
    try {
      return await fn(connection);
    } finally {
      await sql`select pg_advisory_unlock(hashtext(${key}))`.execute(connection);
    }
  });
}

/**
 * The HNSW index is per embedding dimension (pgvector indexes need a fixed dimension, and the column holds
 * vectors of whichever model wrote them): a partial expression index for the configured model's dimension.
 * Queries use the same expression, `embedding::vector(N)`, to reach it.
 */
export async function ensureVectorIndex(db: Kysely<Database>, dimensions: number): Promise<boolean> {
  // Built first: it refuses a dimension that is not a positive integer.
  const statements = [createVectorIndexStatement(dimensions), createVectorIndexStatement(dimensions, 'memory_restatements')];
  if (!isIndexable(dimensions)) return false;
  for (const statement of statements) await sql.raw(statement).execute(db);
  return true;
}

/** True when every known migration has been applied. */
export async function migrationsCurrent(db: Kysely<Database>, schema: string): Promise<boolean> {
  const applied = await createMigrator(db, schema).getMigrations();
  return applied.every((migration) => migration.executedAt !== undefined);
}
