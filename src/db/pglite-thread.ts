import type { Results } from '@electric-sql/pglite';
import type { Worker } from 'node:worker_threads';
import { siblingModule, startWorker } from '../worker-thread.js';
import { EngineUnavailableError } from './pglite-engine.js';
import type { PGliteQueryable } from './pglite-dialect.js';

export interface ThreadSettings {
  readonly dataDir: string;
  /** Set for the session on every open, as the in-thread path does. */
  readonly searchPath: string;
  /** Whether the data folder may be opened again after a PANIC (not for memory://). */
  readonly reopenable: boolean;
}

export type ThreadRequest =
  | { readonly type: 'query'; readonly id: number; readonly text: string; readonly params: unknown[] | undefined }
  | { readonly type: 'close' };

export type ThreadReply =
  | { readonly type: 'ready' }
  | { readonly type: 'failed'; readonly error: SerialisedError }
  | { readonly type: 'result'; readonly id: number; readonly rows: unknown[]; readonly affectedRows: number }
  | { readonly type: 'error'; readonly id: number; readonly error: SerialisedError }
  | { readonly type: 'lost'; readonly reason: string }
  | { readonly type: 'reopened' }
  | { readonly type: 'closed' };

/** An error's name, message and PostgreSQL's fields, as plain data that crosses threads. */
export interface SerialisedError {
  readonly name: string;
  readonly message: string;
  readonly fields: Readonly<Record<string, string>>;
}

/**
 * The fields of PostgreSQL's error report that PGlite copies onto its errors (pg's DatabaseError has the same).
 * Only these cross: PGlite also attaches the statement's parameters, which hold memory text.
 */
const ERROR_FIELDS = [
  'code', 'severity', 'detail', 'hint', 'position', 'internalPosition', 'internalQuery', 'where',
  'schema', 'table', 'column', 'dataType', 'constraint', 'file', 'line', 'routine',
] as const;

export function serialiseError(error: unknown): SerialisedError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), fields: {} };
  const fields: Record<string, string> = {};
  for (const field of ERROR_FIELDS) {
    const value = (error as unknown as Record<string, unknown>)[field];
    if (typeof value === 'string') fields[field] = value;
  }
  return { name: error.name, message: error.message, fields };
}

function deserialiseError({ name, message, fields }: SerialisedError): Error {
  const error = Object.assign(new Error(message), fields);
  error.name = name;
  return error;
}

export interface PGliteThreadOptions extends ThreadSettings {
  /** Told when the engine is lost (a PANIC or FATAL inside the thread), and when it is back. */
  readonly onLost?: (reason: string) => void;
  readonly onReopened?: () => void;
}

const CLOSE_GRACE_MS = 10_000;

/**
 * The thread is gone (an uncaught error, terminated). FATAL, as PostgreSQL reports a backend that ended: the
 * PGliteEngine around this thread drops it and opens the data folder in a new thread, as after a PANIC.
 */
function threadEnded(reason: string): Error {
  return Object.assign(new EngineUnavailableError(reason), { severity: 'FATAL' });
}

interface Pending {
  readonly resolve: (results: Results<unknown>) => void;
  readonly reject: (error: Error) => void;
}

/**
 * PGlite in a worker thread of its own, for the data folder the service opens itself. Each statement is posted
 * with its parameters and answered with its rows, in order; the WASM that runs it (a 16,000-character insert:
 * to_tsvector, a thousand memory_terms rows, the vector index) no longer holds the event loop that serves
 * everyone else. Errors arrive with PostgreSQL's fields (code, severity, ...), so driver-errors.ts classifies
 * them as before; recovery from a PANIC runs inside the thread (PGliteEngine). If the thread itself ends
 * (it never should), the statements waiting on it fail as FATAL, and the PGliteEngine the service wraps around
 * this thread starts a new one.
 */
export class PGliteThread implements PGliteQueryable {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;
  #available = true;
  #ended: Error | undefined;
  #closing: Promise<void> | undefined;

  private constructor(worker: Worker) {
    this.#worker = worker;
  }

  /** Starts the thread and opens PGlite in it; rejects with the opening's error. */
  static open(options: PGliteThreadOptions): Promise<PGliteThread> {
    const settings: ThreadSettings = { dataDir: options.dataDir, searchPath: options.searchPath, reopenable: options.reopenable };
    const worker = startWorker(siblingModule('pglite-worker', import.meta.url), settings);
    const thread = new PGliteThread(worker);
    return new Promise((resolve, reject) => {
      worker.on('message', (reply: ThreadReply) => {
        switch (reply.type) {
          case 'ready':
            worker.unref();
            return resolve(thread);
          case 'failed':
            return reject(deserialiseError(reply.error));
          case 'lost':
            thread.#available = false;
            return options.onLost?.(reply.reason);
          case 'reopened':
            thread.#available = true;
            return options.onReopened?.();
          case 'closed':
            return;
          default:
            return thread.#answer(reply);
        }
      });
      worker.on('error', (error) => {
        const ended = threadEnded(`its thread failed (${error.name})`);
        thread.#end(ended);
        reject(ended);
      });
      worker.on('exit', (code) => {
        const ended = threadEnded(`its thread ended (exit code ${code})`);
        thread.#end(ended);
        reject(ended);
      });
    });
  }

  /** Whether the engine in the thread is usable (false while lost, or once the thread has ended). */
  get available(): boolean {
    return this.#available && this.#ended === undefined;
  }

  query<T>(text: string, params?: unknown[]): Promise<Results<T>> {
    if (this.#closing !== undefined) return Promise.reject(new Error('PGlite is closed'));
    if (this.#ended !== undefined) return Promise.reject(this.#ended);
    const id = this.#nextId++;
    // The thread keeps the process alive only while a statement is waiting on it (a CLI that is done exits).
    if (this.#pending.size === 0) this.#worker.ref();
    return new Promise<Results<T>>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (results: Results<unknown>) => void, reject });
      const request: ThreadRequest = { type: 'query', id, text, params };
      this.#worker.postMessage(request);
    });
  }

  /**
   * Lets the statements already sent finish, closes PGlite in the thread (a checkpoint), and ends the thread. A
   * PGlite that does not close within CLOSE_GRACE_MS (a statement spinning in WASM) is terminated instead: what it
   * committed is in the WAL, which the next open replays.
   */
  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      if (this.#ended !== undefined) return resolve();
      this.#worker.ref();
      const grace = setTimeout(() => void this.terminate(), CLOSE_GRACE_MS);
      this.#worker.once('exit', () => {
        clearTimeout(grace);
        resolve();
      });
      const request: ThreadRequest = { type: 'close' };
      this.#worker.postMessage(request);
    });
    return this.#closing;
  }

  /** Ends the thread now, as a crash would: the statements waiting on it fail, nothing uncommitted survives. */
  async terminate(): Promise<void> {
    await this.#worker.terminate();
  }

  #answer(reply: Extract<ThreadReply, { type: 'result' | 'error' }>): void {
    const pending = this.#pending.get(reply.id);
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0) this.#worker.unref();
    if (reply.type === 'error') pending?.reject(deserialiseError(reply.error));
    else pending?.resolve({ rows: reply.rows, affectedRows: reply.affectedRows, fields: [] });
  }

  #end(error: Error): void {
    this.#ended ??= error;
    for (const { reject } of this.#pending.values()) reject(error);
    this.#pending.clear();
  }
}
