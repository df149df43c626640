import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite/vector';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import { databaseError } from '../errors.js';
import { driverError, type DriverErrorInfo } from './driver-errors.js';
import { ensureVectorIndex, migrateToLatest, migrationsCurrent } from './migrate.js';
import { lockDataFolder } from './pglite-lock.js';
import { PGLITE_PARSERS } from './pglite-timestamps.js';
import type { Database, DbTransaction } from './schema.js';

/** The role subject-scoped transactions switch to when the connecting user would bypass row-level security. */
const RLS_ROLE = 'memory_service_rls';

export interface DatabaseHandle {
  readonly engine: 'pglite' | 'postgres';
  readonly schema: string;
  /**
   * Runs `fn` in one transaction in which row-level security admits only `subject`'s rows
   * (withAllSubjects is for maintenance). A failure rolls the whole transaction back. A driver error (the
   * server's, or a lost connection) becomes DATABASE_ERROR naming `activity` ("storing the memory"); anything
   * else `fn` throws propagates as it is.
   */
  withSubject<T>(subject: string, activity: string, fn: (trx: DbTransaction) => Promise<T>): Promise<T>;
  /**
   * Maintenance only (re-embedding, tests): one transaction in which row-level security admits every
   * subject's rows. Nothing a request carries leads here; a request's subject comes from its token.
   */
  withAllSubjects<T>(activity: string, fn: (trx: DbTransaction) => Promise<T>): Promise<T>;
  /**
   * One transaction in which row-level security admits no subject's rows: for tables that are not subject data
   * and are read before anyone is known (web sessions, looked up by the hash of their cookie).
   */
  withoutSubject<T>(activity: string, fn: (trx: DbTransaction) => Promise<T>): Promise<T>;
  /** Database reachable and migrations current. */
  ready(): Promise<boolean>;
  /** Pool use, for metrics. */
  poolStats(): { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** postgres:// URL; when absent, PGlite in `dataDir`. */
  readonly url?: string | undefined;
  readonly dataDir: string;
  readonly schema: string;
  /** Dimension of the configured embedding model, for its HNSW index. */
  readonly embeddingDimensions: number;
  readonly migrate?: boolean;
  /** An already open PGlite owned by the caller (tests share one per file); not closed by close(). */
  readonly pglite?: PGlite | undefined;
  readonly poolSize?: number;
  /** Told about every driver error, by message and code only (never parameters, which hold memory text). */
  readonly onDriverError?: ((failure: DriverErrorInfo, activity: string) => void) | undefined;
}

export async function openPGlite(dataDir: string): Promise<PGlite> {
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  return PGlite.create({ dataDir, extensions: { vector }, parsers: PGLITE_PARSERS });
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  const { schema } = options;
  const searchPath = `"${schema}", public`;
  let engine: DatabaseHandle['engine'];
  let kysely: Kysely<Database>;
  let pool: pg.Pool | undefined;
  let ownedPglite: PGlite | undefined;
  let unlock: (() => void) | undefined;

  if (options.url !== undefined) {
    engine = 'postgres';
    pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      options: `-c search_path=${searchPath.replace(/ /g, '\\ ')}`,
    });
    // A connection lost while idle in the pool, or between two statements of a transaction (the server restarted),
    // is an 'error' event: unheard, it would end the process. Reported here; the next statement on it fails and
    // becomes DATABASE_ERROR, and the pool replaces it.
    pool.on('connect', (client) => {
      client.on('error', (error) => options.onDriverError?.(driverError(error) ?? { message: error.message, code: undefined }, 'holding a connection'));
    });
    pool.on('error', () => undefined);
    kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  } else {
    engine = 'pglite';
    if (options.pglite === undefined && !options.dataDir.startsWith('memory://')) {
      mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
      unlock = lockDataFolder(options.dataDir);
    }
    let pglite: PGlite;
    try {
      pglite = options.pglite ?? (ownedPglite = await openPGlite(options.dataDir));
    } catch (error) {
      unlock?.();
      throw error;
    }
    // Session-level for migrations; every transaction also sets it locally, so a PGlite shared by several
    // handles (one per test schema) stays correct.
    await pglite.exec(`set search_path to ${searchPath}`);
    // Never destroyed through Kysely: that would close a PGlite the caller may own.
    kysely = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  }

  try {
    if (options.migrate !== false) {
      const { error } = await migrateToLatest(kysely, schema);
      if (error !== undefined) throw error;
    }
    await ensureVectorIndex(kysely, options.embeddingDimensions);
  } catch (error) {
    await closeQuietly();
    throw error;
  }
  const switchRole = await prepareRlsRole(kysely, schema);

  /**
   * One transaction under row-level security: `subject`'s rows, or every row when allSubjects is 'on'. A driver
   * error becomes DATABASE_ERROR naming `activity`; anything else `fn` throws propagates as it is.
   */
  async function scoped<T>(subject: string, allSubjects: 'on' | 'off', activity: string, fn: (trx: DbTransaction) => Promise<T>): Promise<T> {
    try {
      return await kysely.transaction().execute(async (trx) => {
        await sql`select set_config('search_path', ${searchPath}, true),
                         set_config('memory_service.subject', ${subject}, true),
                         set_config('memory_service.all_subjects', ${allSubjects}, true)`.execute(trx);
        if (switchRole) await sql`select set_config('role', ${RLS_ROLE}, true)`.execute(trx);
        return await fn(trx);
      });
    } catch (error) {
      const failure = driverError(error);
      if (failure === undefined) throw error;
      options.onDriverError?.(failure, activity);
      throw databaseError(`the database failed while ${activity}; nothing was changed`, error);
    }
  }

  async function closeQuietly(): Promise<void> {
    if (pool !== undefined) await kysely.destroy().catch(() => undefined);
    else if (ownedPglite !== undefined) await ownedPglite.close().catch(() => undefined);
    unlock?.();
  }

  return {
    engine,
    schema,
    withSubject: (subject, activity, fn) => scoped(subject, 'off', activity, fn),
    withAllSubjects: (activity, fn) => scoped('', 'on', activity, fn),
    // No subject is the empty string (see auth/subject.ts), so '' admits no subject's rows.
    withoutSubject: (activity, fn) => scoped('', 'off', activity, fn),
    async ready() {
      try {
        await sql`select 1`.execute(kysely);
        return await migrationsCurrent(kysely, schema);
      } catch {
        return false;
      }
    },
    poolStats() {
      if (pool === undefined) return { total: 1, idle: 1, waiting: 0 };
      return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
    },
    close: closeQuietly,
  };
}

/**
 * Superusers and BYPASSRLS roles skip row-level security, so for them every subject-scoped transaction
 * switches to a least-privileged role. Returns whether that switch is needed.
 */
async function prepareRlsRole(db: Kysely<Database>, schema: string): Promise<boolean> {
  const { rows } = await sql<{ bypass: boolean }>`
    select (rolsuper or rolbypassrls) as bypass from pg_roles where rolname = current_user`.execute(db);
  if (rows[0]?.bypass !== true) return false;
  await sql`
    do $$ begin
      if not exists (select from pg_roles where rolname = ${sql.lit(RLS_ROLE)}) then
        create role ${sql.id(RLS_ROLE)} nologin;
      end if;
    end $$`.execute(db);
  await sql`grant usage on schema ${sql.id(schema)} to ${sql.id(RLS_ROLE)}`.execute(db);
  await sql`grant select, insert, update, delete on all tables in schema ${sql.id(schema)} to ${sql.id(RLS_ROLE)}`.execute(db);
  await sql`grant usage, select on all sequences in schema ${sql.id(schema)} to ${sql.id(RLS_ROLE)}`.execute(db);
  return true;
}
