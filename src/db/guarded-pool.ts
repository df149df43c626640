import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';
import { driverError } from './driver-errors.js';
import { preparedName } from './prepared.js';

// pg honours a per-statement `query_timeout` (lib/client.js); its type declarations leave it out.
declare module 'pg' {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- a merged declaration repeats the type parameter
  interface QueryConfig<I> {
    query_timeout?: number | undefined;
  }
}

/** A transaction's start as Kysely sends it ("begin", "start transaction read only"). */
const TRANSACTION_START = /^(?:begin|start transaction)\b[\w ]*$/i;

/** Marks a statement without parameters whose answer nobody reads (withNext). */
const WITH_NEXT = '/* with the next statement */ ';

/**
 * `statement` (no parameters; its answer is not read: the row-level settings a transaction begins with) goes to
 * the server in the round trip of the statement after it.
 */
export function withNext(statement: string): string {
  return `${WITH_NEXT}${statement}`;
}

/** The answer to a statement whose own answer nobody needs to wait for. */
const NOTHING_YET: PostgresQueryResult<never> = { command: 'SELECT', rowCount: 0, rows: [] };

/**
 * The pg pool as Kysely sees it, preparing the statements marked for it (prepared.ts), sending a transaction's
 * start and the statements marked withNext (the row-level-security settings every transaction begins with:
 * open-database.ts) in the round trip of the next statement, and answering a read-only transaction's commit at
 * once (the connection returns to the pool when the server has answered it), with two guards:
 * - each statement gets a client-side deadline (`queryTimeoutMs`), so a server that stops answering (a cut
 *   network, a frozen host) cannot hold a request for longer than that;
 * - a connection on which a statement failed for want of a connection (lost, or timed out with its answer
 *   still owed) is destroyed on release instead of going back to the pool, where the next transaction would
 *   queue behind the answer that never comes.
 */
export function guardedPool(pool: pg.Pool, queryTimeoutMs: number | undefined): PostgresPool {
  return {
    connect: async () => new GuardedClient(await pool.connect(), queryTimeoutMs),
    end: () => pool.end(),
  };
}

class GuardedClient implements PostgresPoolClient {
  readonly #client: pg.PoolClient;
  readonly #queryTimeoutMs: number | undefined;
  #broken: Error | undefined;
  /** A transaction's start and the statements marked withNext after it, not sent yet: they go with the next statement. */
  #held: string | undefined;
  /** The open transaction is read-only: its commit changes nothing, so nobody waits for its answer. */
  #readOnly = false;
  /** That commit, until answered: the connection goes back to the pool only then. */
  #committing: Promise<unknown> | undefined;

  constructor(client: pg.PoolClient, queryTimeoutMs: number | undefined) {
    this.#client = client;
    this.#queryTimeoutMs = queryTimeoutMs;
  }

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(statement: string | PostgresCursor<R>, parameters: ReadonlyArray<unknown> = []): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    if (typeof statement !== 'string') throw new Error('cursors are not used by this service');
    return this.#run<R>(statement, parameters);
  }

  async #run<R>(text: string, values: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    if (values.length === 0 && TRANSACTION_START.test(text.trim())) {
      this.#held = text;
      this.#readOnly = /\bread only\b/i.test(text);
      return NOTHING_YET as PostgresQueryResult<R>;
    }
    if (values.length === 0 && text.startsWith(WITH_NEXT)) {
      this.#held = this.#held === undefined ? text : `${this.#held};\n${text}`;
      return NOTHING_YET as PostgresQueryResult<R>;
    }
    if (this.#readOnly && values.length === 0 && /^commit$/i.test(text.trim()) && this.#held === undefined) {
      this.#readOnly = false;
      this.#committing = this.#send(text, []).catch(() => undefined);
      return NOTHING_YET as PostgresQueryResult<R>;
    }
    const held = this.#held;
    this.#held = undefined;
    if (held === undefined) return this.#send(text, values);
    // Several statements in one text go by the simple protocol, which takes no parameters and prepares nothing.
    if (values.length === 0 && preparedName(text) === undefined) return this.#send(`${held};\n${text}`, values);
    // Otherwise both are written at once (the pool's connections pipeline) and answered in one round trip. The
    // server runs them in order: if the held ones fail, the transaction is aborted and so is the statement, whose
    // error (25P02) would hide the cause.
    const [start, statement] = await Promise.allSettled([this.#send(held, []), this.#send<R>(text, values)]);
    if (start.status === 'rejected') throw start.reason;
    if (statement.status === 'rejected') throw statement.reason;
    return statement.value;
  }

  async #send<R>(text: string, values: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    // Its answer still owed, the connection would make the next statement (the rollback) wait out a deadline too.
    if (this.#broken !== undefined) throw this.#broken;
    try {
      const answer = await this.#client.query<R & pg.QueryResultRow>({ name: preparedName(text), text, values: [...values], query_timeout: this.#queryTimeoutMs });
      // Several statements answer with one result each: the last is the caller's.
      const result = (Array.isArray(answer) ? answer.at(-1) : answer) as pg.QueryResult<R & pg.QueryResultRow>;
      return { command: result.command as PostgresQueryResult<R>['command'], rowCount: result.rowCount ?? 0, rows: result.rows };
    } catch (error) {
      // A server error (it has a SQLSTATE) leaves the connection usable; anything else may not have.
      const failure = driverError(error);
      if (failure === undefined || failure.code === undefined || !/^[0-9A-Z]{5}$/.test(failure.code)) this.#broken = error as Error;
      throw error;
    }
  }

  release(): void {
    this.#held = undefined;
    this.#readOnly = false;
    const committing = this.#committing;
    this.#committing = undefined;
    if (committing === undefined) this.#client.release(this.#broken);
    else void committing.then(() => this.#client.release(this.#broken));
  }
}
