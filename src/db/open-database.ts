import { mkdirSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { databaseError } from '../errors.js';
import { driverError, type DriverErrorInfo } from './driver-errors.js';
import { ensureVectorIndex, migrateToLatest, migrationsCurrent, oneProcessAtATime } from './migrate.js';
import { introspectingOneSchema } from './own-schema-introspector.js';
import { guardedPool, withNext } from './guarded-pool.js';
import { PGliteDialect } from './pglite-dialect.js';
import { PGliteEngine, type EngineInstance } from './pglite-engine.js';
import { lockDataFolder } from './pglite-lock.js';
import { PGliteThread } from './pglite-thread.js';
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_STATEMENT_TIMEOUT_MS } from './timeouts.js';
import type { Database, DbTransaction } from './schema.js';

/** The role subject-scoped transactions switch to when the connecting user would bypass row-level security. */
const RLS_ROLE = 'memory_service_rls';

/** How long the client waits past the server's statement_timeout before it gives the connection up. */
const CLIENT_GRACE_MS = 2_000;
/** How long, at most, a commit whose answer was lost is looked up before its outcome is called unknown. */
const OUTCOME_LOOKUP_MS = 3_000;

export interface DatabaseHandle {
  readonly engine: 'pglite' | 'postgres';
  readonly schema: string;
  /**
   * Runs `fn` in one transaction in which row-level security admits only `subject`'s rows
   * (withAllSubjects is for maintenance). A failure rolls the whole transaction back. A driver error (the
   * server's, or a lost connection) becomes DATABASE_ERROR naming `activity` ("storing the memory"); anything
   * else `fn` throws propagates as it is. With `readOnly`, the database refuses any write in it, and its commit
   * has nothing to look up (see scoped): one round trip fewer for a read such as recall.
   */
  withSubject<T>(subject: string | Principal, activity: string, fn: (trx: DbTransaction) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Maintenance only (re-embedding, tests): one transaction in which row-level security admits every
   * subject's rows. Nothing a request carries leads here; a request's subject comes from its token.
   */
  withAllSubjects<T>(activity: string, fn: (trx: DbTransaction) => Promise<T>): Promise<T>;
  /**
   * The built-in authorization server's transactions: its objects (oauth_objects) are visible, and no subject's
   * rows are. Nothing else sets the setting that admits those objects, so no subject's transaction sees them.
   */
  withAuthorizationServer<T>(activity: string, fn: (trx: DbTransaction) => Promise<T>): Promise<T>;
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

export interface TransactionOptions {
  /** The transaction only reads. */
  readonly readOnly?: boolean;
}

/**
 * Who a transaction acts for: row-level security admits the rows of the spaces `subject` is a member of
 * (migration 0020), only those of `spaceLimit` when it is given (a token limited to some spaces: their keys), and
 * those of spaces whose external group is among `groups` (an external authorization server's claim).
 */
export interface Principal {
  readonly subject: string;
  readonly spaceLimit?: readonly string[] | undefined;
  readonly groups?: readonly string[] | undefined;
}

/** What row-level security admits in one transaction (transaction-local settings). */
interface RowScope {
  readonly subject: string;
  /** Space keys, a JSON array; '' for no limit. */
  readonly spaceLimit: string;
  /** A JSON array; '' for none. */
  readonly groups: string;
  readonly allSubjects: 'on' | 'off';
  readonly authorizationServer: 'on' | 'off';
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
  /** PostgreSQL: how long to wait for a connection (a new one, or a free one from the pool). */
  readonly connectTimeoutMs?: number | undefined;
  /** PostgreSQL: longest statement of a request's transaction (0: none). Maintenance (migrations) has none. */
  readonly statementTimeoutMs?: number | undefined;
  /** Told about every driver error, by message and code only (never parameters, which hold memory text). */
  readonly onDriverError?: ((failure: DriverErrorInfo, activity: string) => void) | undefined;
  /** Told when the embedded database is lost (PGlite after a PANIC) and when it has been reopened. */
  readonly onEngineEvent?: ((event: 'lost' | 'reopened', detail: string) => void) | undefined;
}

type Outcome = 'committed' | 'aborted' | 'unknown';

// No subject is the empty string (see auth/subject.ts), so '' admits no subject's rows and no space's.
const NOBODY = { subject: '', spaceLimit: '', groups: '' } as const;

function principalScope(who: string | Principal): Pick<RowScope, 'subject' | 'spaceLimit' | 'groups'> {
  if (typeof who === 'string') return { subject: who, spaceLimit: '', groups: '' };
  // A limit naming no space ('[]') admits none; '' is "no limit".
  const spaceLimit = who.spaceLimit === undefined ? '' : JSON.stringify(who.spaceLimit);
  return { subject: who.subject, spaceLimit, groups: who.groups === undefined || who.groups.length === 0 ? '' : JSON.stringify(who.groups) };
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  const { schema } = options;
  const searchPath = `"${schema}", public`;
  const statementTimeoutMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  let engine: DatabaseHandle['engine'];
  /** Requests' transactions. */
  let kysely: Kysely<Database>;
  /** Migrations and index builds: no statement timeout (an HNSW build over a large table takes minutes). */
  let maintenance: Kysely<Database>;
  let pool: pg.Pool | undefined;
  let pglite: PGliteEngine<EngineInstance> | undefined;
  /** Whether a commit whose answer was lost can be looked up (PostgreSQL: pg_xact_status). */
  let outcomeOf: ((xid: string) => Promise<Outcome>) | undefined;
  let unlock: (() => void) | undefined;

  if (options.url !== undefined) {
    engine = 'postgres';
    const serverPool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      options: `-c search_path=${searchPath.replace(/ /g, '\\ ')}`,
      application_name: 'memory-service',
      // Bounded waits: for a new connection (a server that accepts but never answers) and for a free one.
      connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      // A peer that vanished (a failover, a cut network) is noticed on idle connections too.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      // A statement may be written before the one ahead of it is answered (guarded-pool.ts: a transaction's start
      // and settings go with its first statement).
      pipeline: true,
    });
    pool = serverPool;
    // A connection lost while idle in the pool, or between two statements of a transaction (the server restarted),
    // is an 'error' event: unheard, it would end the process. Reported here; the next statement on it fails and
    // becomes DATABASE_ERROR, and the pool replaces it.
    serverPool.on('connect', (client) => {
      client.on('error', (error) => options.onDriverError?.(driverError(error) ?? { message: error.message, code: undefined }, 'holding a connection'));
    });
    serverPool.on('error', () => undefined);
    const clientTimeout = statementTimeoutMs > 0 ? statementTimeoutMs + CLIENT_GRACE_MS : undefined;
    kysely = new Kysely<Database>({ dialect: introspectingOneSchema(new PostgresDialect({ pool: guardedPool(serverPool, clientTimeout) }), schema) });
    maintenance = new Kysely<Database>({ dialect: introspectingOneSchema(new PostgresDialect({ pool: guardedPool(serverPool, undefined) }), schema) });
    outcomeOf = (xid) => commitOutcome(serverPool, xid);
  } else {
    engine = 'pglite';
    const inMemory = options.dataDir.startsWith('memory://');
    const onLost = (reason: string) => options.onEngineEvent?.('lost', reason);
    const onReopened = () => options.onEngineEvent?.('reopened', options.dataDir);
    if (options.pglite !== undefined) {
      // The caller's instance (tests share one per file) stays in the caller's thread; it is never reopened.
      await options.pglite.exec(`set search_path to ${searchPath}`);
      pglite = new PGliteEngine(options.pglite, { reopen: undefined, onLost, onReopened });
    } else {
      if (!inMemory) {
        mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
        // One process per data folder: a second one (a CLI import while the server runs) is told so, clearly.
        unlock = lockDataFolder(options.dataDir);
      }
      try {
        // The service's own PGlite runs in a worker thread, off the event loop that serves every request. A thread
        // that ends is replaced by a new one on the same folder (its WAL replayed), as a PANIC is inside it.
        const openThread = () => PGliteThread.open({ dataDir: options.dataDir, searchPath, reopenable: !inMemory, onLost, onReopened });
        pglite = new PGliteEngine(await openThread(), { reopen: inMemory ? undefined : openThread, onLost, onReopened });
      } catch (error) {
        unlock?.();
        throw error;
      }
    }
    kysely = new Kysely<Database>({ dialect: introspectingOneSchema(new PGliteDialect(pglite), schema) });
    maintenance = kysely;
  }

  let switchRole: boolean;
  try {
    switchRole = await oneProcessAtATime(maintenance, schema, async (db) => {
      // This connection may have resolved its search path before another replica created the schema (CI once
      // saw "memories" missing on such a connection after the migrations were in): setting it again here makes
      // PostgreSQL resolve it anew, with the schema as it is now.
      await sql`select set_config('search_path', ${searchPath}, false)`.execute(db);
      if (options.migrate !== false) {
        const { error } = await migrateToLatest(db, schema);
        if (error !== undefined) throw error;
      }
      await ensureVectorIndex(db, options.embeddingDimensions);
      return prepareRlsRole(db, schema);
    });
  } catch (error) {
    await closeQuietly();
    throw error;
  }
  const timeoutSetting = engine === 'postgres' && statementTimeoutMs > 0 ? `${statementTimeoutMs}ms` : undefined;

  /**
   * The settings a transaction runs under, as literals (pg's escaping): a statement without parameters, which the
   * driver sends in the round trip that starts the transaction (guarded-pool.ts).
   */
  const scopeSettings = (scope: RowScope): string => {
    const settings: [string, string][] = [
      ['search_path', searchPath],
      ['memory_service.subject', scope.subject],
      ['memory_service.space_limit', scope.spaceLimit],
      ['memory_service.groups', scope.groups],
      ['memory_service.all_subjects', scope.allSubjects],
      ['memory_service.authorization_server', scope.authorizationServer],
      ...(timeoutSetting === undefined ? [] : [['statement_timeout', timeoutSetting] as [string, string]]),
      ...(switchRole ? [['role', RLS_ROLE] as [string, string]] : []),
    ];
    return `select ${settings.map(([name, value]) => `set_config(${pg.escapeLiteral(name)}, ${pg.escapeLiteral(value)}, true)`).join(', ')}`;
  };

  /**
   * One transaction under row-level security: `subject`'s rows, or every subject's when allSubjects is 'on', or
   * the authorization server's objects when authorizationServer is 'on'. A driver error becomes DATABASE_ERROR
   * naming `activity`; anything else `fn` throws propagates as it is.
   *
   * A commit whose answer is lost (the connection broke while COMMIT ran) may have happened or not. On
   * PostgreSQL the transaction's id is read before committing, and its fate is then looked up on another
   * connection: committed means the work is done and its result is returned; aborted means nothing changed.
   */
  async function scoped<T>(scope: RowScope, activity: string, fn: (trx: DbTransaction) => Promise<T>, transaction: TransactionOptions = {}): Promise<T> {
    // Set once `fn` has finished: from then on a failure is the commit's.
    const work: { done?: { value: T; xid: string | undefined } } = {};
    const readOnly = transaction.readOnly === true;
    try {
      return await (readOnly ? kysely.transaction().setAccessMode('read only') : kysely.transaction()).execute(async (trx) => {
        await sql.raw(withNext(scopeSettings(scope))).execute(trx);
        const value = await fn(trx);
        // A read-only transaction never has an id: its lost commit changed nothing either way.
        work.done = { value, xid: outcomeOf === undefined || readOnly ? undefined : await writingTransactionId(trx) };
        return value;
      });
    } catch (error) {
      const failure = driverError(error);
      if (failure === undefined) throw error;
      options.onDriverError?.(failure, activity);
      const { done } = work;
      if (done !== undefined) {
        // The work was done; only the commit's answer is missing. Nothing written: nothing to lose.
        const outcome = done.xid === undefined || outcomeOf === undefined ? 'committed' : await outcomeOf(done.xid);
        if (outcome === 'committed') return done.value;
        if (outcome === 'unknown') {
          throw databaseError(`the database failed while ${activity}, and whether the change was saved is unknown; check before retrying`, error);
        }
      }
      throw databaseError(`the database failed while ${activity}; nothing was changed`, error);
    }
  }

  async function closeQuietly(): Promise<void> {
    // The pool itself, not kysely.destroy(): Kysely ends it only if that instance ever ran a statement, and a
    // service closed before serving one (or the maintenance instance alone) would leave its connections open.
    if (pool !== undefined) await pool.end().catch(() => undefined);
    else if (options.pglite === undefined) await pglite?.close().catch(() => undefined);
    unlock?.();
  }

  return {
    engine,
    schema,
    withSubject: (who, activity, fn, transaction) => scoped({ ...principalScope(who), allSubjects: 'off', authorizationServer: 'off' }, activity, fn, transaction),
    withAllSubjects: (activity, fn) => scoped({ ...NOBODY, allSubjects: 'on', authorizationServer: 'off' }, activity, fn),
    withAuthorizationServer: (activity, fn) => scoped({ ...NOBODY, allSubjects: 'off', authorizationServer: 'on' }, activity, fn),
    withoutSubject: (activity, fn) => scoped({ ...NOBODY, allSubjects: 'off', authorizationServer: 'off' }, activity, fn),
    async ready() {
      try {
        await sql`select 1`.execute(kysely);
        return await migrationsCurrent(kysely, schema);
      } catch {
        return false;
      }
    },
    poolStats() {
      if (pool === undefined) return { total: 1, idle: pglite?.available === false ? 0 : 1, waiting: 0 };
      return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
    },
    close: closeQuietly,
  };
}

/** The transaction's id when it has written anything (only then can its commit change something). */
async function writingTransactionId(trx: DbTransaction): Promise<string | undefined> {
  const { rows } = await sql<{ xid: string | null }>`select pg_current_xact_id_if_assigned()::text as xid`.execute(trx);
  return rows[0]?.xid ?? undefined;
}

/**
 * Asks the server, on a fresh connection, whether transaction `xid` committed. A backend that lost its client
 * while committing either finished the commit or aborted; 'in progress' only lasts until it has. Gives up
 * (unknown) after OUTCOME_LOOKUP_MS, e.g. while the server is down.
 */
async function commitOutcome(pool: pg.Pool, xid: string): Promise<Outcome> {
  const deadline = Date.now() + OUTCOME_LOOKUP_MS;
  for (;;) {
    try {
      const { rows } = await pool.query<{ status: string | null }>({
        text: 'select pg_xact_status($1::xid8) as status',
        values: [xid],
        query_timeout: OUTCOME_LOOKUP_MS,
      });
      const status = rows[0]?.status;
      if (status === 'committed') return 'committed';
      if (status === 'aborted') return 'aborted';
    } catch {
      // Not reachable yet: try again until the deadline.
    }
    if (Date.now() >= deadline) return 'unknown';
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
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
    -- The role is per cluster, the start-up lock per schema: services on other schemas may create it meanwhile.
    exception when duplicate_object or unique_violation then null;
    end $$`.execute(db);
  await sql`grant usage on schema ${sql.id(schema)} to ${sql.id(RLS_ROLE)}`.execute(db);
  await sql`grant select, insert, update, delete on all tables in schema ${sql.id(schema)} to ${sql.id(RLS_ROLE)}`.execute(db);
  await sql`grant usage, select on all sequences in schema ${sql.id(schema)} to ${sql.id(RLS_ROLE)}`.execute(db);
  return true;
}
