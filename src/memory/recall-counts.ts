import type { Principal } from '../db/open-database.js';

/**
 * Recall counts (they feed the brief), written after the recall has answered instead of in a transaction of their
 * own on its path: that transaction was 6 of a recall's 14 round trips on PostgreSQL (bench/README.md, "Recall's
 * round trips"). Counts wait in process memory for WRITE_DELAY_MS and are written by one transaction per caller, at
 * most one write at a time: the recalls answered meanwhile are counted together, so a busy subject costs a write
 * every WRITE_DELAY_MS, not one a recall (bench/README.md, "Recall counts written together"). The brief and close
 * flush first, so neither misses a count. A count is statistics nobody was told was stored: one lost to a crash or a
 * database failure is reported and not retried.
 */
export type WriteRecallCounts = (caller: Principal, counts: ReadonlyMap<number, number>) => Promise<void>;

/** Most memories waiting to be counted, over every caller: past it, counts are dropped (and reported), never memory grown. */
const MOST_PENDING = 10_000;
/** How long counts wait to be written together; a crash loses at most this long's counts. */
export const WRITE_DELAY_MS = 250;

export class RecallCounts {
  readonly #write: WriteRecallCounts;
  readonly #onError: (error: unknown) => void;
  /** By caller (its subject and scope as JSON): the caller and each memory's count. */
  #pending = new Map<string, { caller: Principal; counts: Map<number, number> }>();
  #pendingIds = 0;
  #writing: Promise<void> | undefined;
  #scheduled = false;

  readonly #delayMs: number;

  constructor(write: WriteRecallCounts, onError: (error: unknown) => void, delayMs = WRITE_DELAY_MS) {
    this.#write = write;
    this.#onError = onError;
    this.#delayMs = delayMs;
  }

  /** Counts one recall of each of `ids` by `caller`, to be written shortly. */
  add(caller: Principal, ids: readonly number[]): void {
    if (ids.length === 0) return;
    const key = JSON.stringify([caller.subject, caller.spaceLimit ?? null, caller.groups ?? null]);
    const entry = this.#pending.get(key) ?? { caller, counts: new Map<number, number>() };
    this.#pending.set(key, entry);
    for (const id of ids) {
      const count = entry.counts.get(id);
      if (count === undefined && this.#pendingIds >= MOST_PENDING) {
        this.#onError(new Error('too many recall counts waiting to be written; this one was dropped'));
        continue;
      }
      if (count === undefined) this.#pendingIds++;
      entry.counts.set(id, (count ?? 0) + 1);
    }
    this.#schedule();
  }

  /** Resolves once every count added before the call is written (or has failed and been reported). */
  async flush(): Promise<void> {
    while (this.#writing !== undefined || this.#pending.size > 0) {
      this.#writing ??= this.#writeAll();
      await this.#writing;
    }
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    // Well after the recall's reply is on its way; a write already running picks these up when it ends (flush's
    // loop). Unreferenced: close() flushes what waits.
    setTimeout(() => {
      this.#scheduled = false;
      void this.flush();
    }, this.#delayMs).unref();
  }

  async #writeAll(): Promise<void> {
    const batch = [...this.#pending.values()];
    this.#pending = new Map();
    this.#pendingIds = 0;
    try {
      for (const { caller, counts } of batch) {
        try {
          await this.#write(caller, counts);
        } catch (error) {
          this.#onError(error);
        }
      }
    } finally {
      this.#writing = undefined;
    }
  }
}
