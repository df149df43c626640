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

/**
 * The pg pool as Kysely sees it, preparing the statements marked for it (prepared.ts), with two guards:
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
    try {
      const result = await this.#client.query<R & pg.QueryResultRow>({ name: preparedName(text), text, values: [...values], query_timeout: this.#queryTimeoutMs });
      return { command: result.command as PostgresQueryResult<R>['command'], rowCount: result.rowCount ?? 0, rows: result.rows };
    } catch (error) {
      // A server error (it has a SQLSTATE) leaves the connection usable; anything else may not have.
      const failure = driverError(error);
      if (failure === undefined || failure.code === undefined || !/^[0-9A-Z]{5}$/.test(failure.code)) this.#broken = error as Error;
      throw error;
    }
  }

  release(): void {
    this.#client.release(this.#broken);
  }
}
