import type { Results } from '@electric-sql/pglite';
import type { PGliteQueryable } from './pglite-dialect.js';
import { PGLITE_QUERY_OPTIONS } from './pglite-open.js';

/** Thrown for every statement while the engine is lost and cannot be reopened; driver-errors.ts classifies it. */
export class EngineUnavailableError extends Error {
  constructor(reason: string) {
    super(`the embedded database is unavailable: ${reason}`);
    this.name = 'EngineUnavailableError';
  }
}

/** What the engine drives: PGlite itself, or PGlite in a thread of its own (pglite-thread.ts). */
export type EngineInstance = PGliteQueryable & { close(): Promise<void>; readonly available?: boolean };

export interface PGliteEngineOptions<Instance extends EngineInstance> {
  /** Opens PGlite on the data folder again (recovery replays its WAL); undefined for a PGlite the caller owns. */
  readonly reopen: (() => Promise<Instance>) | undefined;
  /** Told when the engine is lost (a PANIC or FATAL), and when it is back. */
  readonly onLost?: (reason: string) => void;
  readonly onReopened?: () => void;
  /** After a failed reopen, statements fail at once for this long before the next attempt (default 1 s). */
  readonly retryAfterMs?: number;
}

/** Severities after which PostgreSQL's process would be gone; PGlite carries on in a state that can hang. */
const FATAL_SEVERITIES = new Set(['PANIC', 'FATAL']);

/**
 * PGlite that survives its own death. PostgreSQL answers a failed WAL write (a full disk) with a PANIC and ends
 * the process; PGlite, being a library, reports the error but is left broken: the next statement on it can
 * spin forever inside WASM and freeze the event loop. So after a PANIC or FATAL this engine never touches that
 * instance again. A transaction that was open on it fails (its rollback is a no-op: the transaction died with
 * the instance, and recovery discards it); the next statement outside such a transaction opens the data folder
 * anew, which replays the WAL up to the last commit. While that fails (the disk is still full), statements fail
 * at once with EngineUnavailableError, and a new attempt is made every `retryAfterMs`.
 */
export class PGliteEngine<Instance extends EngineInstance> implements PGliteQueryable {
  readonly #options: PGliteEngineOptions<Instance>;
  #instance: Instance | undefined;
  #lostReason: string | undefined;
  /** A transaction was open on the instance that was lost: its remaining statements fail until it ends. */
  #orphanedTransaction = false;
  #inTransaction = false;
  #reopening: Promise<Instance> | undefined;
  #nextAttemptAt = 0;
  #closed = false;

  constructor(instance: Instance, options: PGliteEngineOptions<Instance>) {
    this.#instance = instance;
    this.#options = options;
  }

  /** Whether the current instance is usable (false while lost, here or inside a thread's own engine). */
  get available(): boolean {
    return this.#instance !== undefined && this.#instance.available !== false;
  }

  async query<T>(text: string, params?: unknown[]): Promise<Results<T>> {
    const boundary = transactionBoundary(text);
    if (this.#closed) throw new Error('PGlite is closed');
    if (this.#orphanedTransaction) {
      if (boundary === 'end') this.#orphanedTransaction = false;
      if (/^\s*rollback\s*;?\s*$/i.test(text)) return { rows: [], fields: [], affectedRows: 0 };
      throw new EngineUnavailableError(this.#lostReason ?? 'lost');
    }
    const instance = this.#instance ?? (await this.#reopen());
    try {
      // A thread's own engine passes them to the PGlite inside it.
      const result = await instance.query<T>(text, params, PGLITE_QUERY_OPTIONS);
      if (boundary === 'begin') this.#inTransaction = true;
      else if (boundary === 'end') this.#inTransaction = false;
      return result;
    } catch (error) {
      const severity = (error as { severity?: unknown }).severity;
      if (typeof severity === 'string' && FATAL_SEVERITIES.has(severity) && this.#instance === instance) this.#lose(error as Error);
      else if (boundary === 'end') this.#inTransaction = false;
      throw error;
    }
  }

  /** Closes the live instance; a lost one is left alone (closing it would run a statement on it). */
  async close(): Promise<void> {
    this.#closed = true;
    const instance = this.#instance ?? (await this.#reopening?.catch(() => undefined));
    this.#instance = undefined;
    await instance?.close();
  }

  #lose(error: Error): void {
    this.#instance = undefined;
    this.#lostReason = error.message;
    this.#orphanedTransaction = this.#inTransaction;
    this.#inTransaction = false;
    this.#nextAttemptAt = 0;
    this.#options.onLost?.(error.message);
  }

  #reopen(): Promise<Instance> {
    const reopen = this.#options.reopen;
    if (reopen === undefined) return Promise.reject(new EngineUnavailableError(`${this.#lostReason ?? 'lost'} (it cannot be reopened)`));
    if (this.#reopening !== undefined) return this.#reopening;
    if (Date.now() < this.#nextAttemptAt) return Promise.reject(new EngineUnavailableError(this.#lostReason ?? 'lost'));
    this.#reopening = reopen().then(
      (instance) => {
        this.#reopening = undefined;
        if (this.#closed) {
          void instance.close();
          throw new Error('PGlite is closed');
        }
        this.#instance = instance;
        this.#lostReason = undefined;
        this.#options.onReopened?.();
        return instance;
      },
      (error: unknown) => {
        this.#reopening = undefined;
        this.#nextAttemptAt = Date.now() + (this.#options.retryAfterMs ?? 1_000);
        throw new EngineUnavailableError(`${this.#lostReason ?? 'lost'}; reopening failed: ${(error as Error).message}`);
      },
    );
    return this.#reopening;
  }
}

function transactionBoundary(text: string): 'begin' | 'end' | undefined {
  if (/^\s*(begin|start\s+transaction)\b/i.test(text)) return 'begin';
  if (/^\s*(commit|rollback|end)\s*;?\s*$/i.test(text)) return 'end';
  return undefined;
}
