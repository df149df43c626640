import { embeddingError } from '../errors.js';

export interface ProviderGuardOptions {
  /** Names the provider in messages ("embedding provider at http://…"). */
  readonly source: string;
  /** Most calls running at once. */
  readonly concurrency: number;
  /** Most calls waiting for a slot; past it a call fails at once ("busy"). */
  readonly queueLimit: number;
  /** Consecutive failed calls that open the circuit (default 5). */
  readonly failuresToOpen?: number;
  /** How long an open circuit fails calls at once before one probe call is let through (default 5 s). */
  readonly coolDownMs?: number;
  readonly now?: () => number;
}

interface Waiter {
  readonly deadline: number;
  readonly grant: () => void;
  readonly expire: () => void;
}

/** A slot that frees up this close to a waiter's deadline is of no use to it: a request could not finish. */
const MIN_USEFUL_MS = 100;

/**
 * What stands between callers and a remote provider that may be down, slow or hanging:
 * - a deadline per call, covering the wait for a slot and the call itself (its AbortSignal fires then);
 * - at most `concurrency` calls in flight and `queueLimit` waiting: a hanging provider holds a bounded number of
 *   requests, and the rest are told at once that it is busy;
 * - a circuit breaker: after `failuresToOpen` failed calls in a row, calls fail at once for `coolDownMs`; then one
 *   probe call goes through, and its success closes the circuit (its failure opens it again).
 * Failures that are the caller's (a 400 for one text) do not count: `run` is told which are the provider's.
 */
export class ProviderGuard {
  readonly #options: ProviderGuardOptions;
  readonly #waiting: Waiter[] = [];
  #inFlight = 0;
  #failures = 0;
  #openUntil: number | undefined;
  #probing = false;

  constructor(options: ProviderGuardOptions) {
    this.#options = options;
  }

  /** Calls in flight now (for tests and metrics). */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Calls waiting for a slot now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** False while the circuit is open (the provider is known to be failing). */
  get available(): boolean {
    return this.#openUntil === undefined || this.#now() >= this.#openUntil;
  }

  /**
   * Runs `task` under the guard, by `deadline` (epoch ms). `isProviderFault` tells which of its errors count
   * against the provider.
   */
  async run<T>(deadline: number, isProviderFault: (error: unknown) => boolean, task: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const probe = this.#admit();
    try {
      await this.#acquire(deadline);
    } catch (error) {
      if (probe) this.#probing = false;
      throw error;
    }
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), Math.max(0, deadline - this.#now()));
    try {
      const result = await task(controller.signal);
      this.#failures = 0;
      this.#openUntil = undefined;
      return result;
    } catch (error) {
      if (isProviderFault(error)) this.#recordFailure(probe);
      throw error;
    } finally {
      clearTimeout(timer);
      if (probe) this.#probing = false;
      this.#release();
    }
  }

  /** Refuses a call while the circuit is open; returns whether this call is the half-open probe. */
  #admit(): boolean {
    if (this.#openUntil === undefined) return false;
    const wait = this.#openUntil - this.#now();
    if (wait > 0 || this.#probing) {
      const seconds = Math.max(1, Math.ceil(wait / 1000));
      throw embeddingError(
        `${this.#options.source} is failing (${this.#failures} failed requests in a row); not asking it again for ${seconds} s`,
      );
    }
    this.#probing = true;
    return true;
  }

  #recordFailure(probe: boolean): void {
    this.#failures += 1;
    if (probe || this.#failures >= (this.#options.failuresToOpen ?? 5)) this.#openUntil = this.#now() + (this.#options.coolDownMs ?? 5_000);
  }

  #acquire(deadline: number): Promise<void> {
    if (this.#inFlight < this.#options.concurrency) {
      this.#inFlight += 1;
      return Promise.resolve();
    }
    if (this.#waiting.length >= this.#options.queueLimit) {
      return Promise.reject(
        embeddingError(
          `${this.#options.source} is busy: ${this.#inFlight} requests in flight and ${this.#waiting.length} waiting; try again shortly`,
        ),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.splice(this.#waiting.indexOf(waiter), 1);
        waiter.expire();
      }, Math.max(0, deadline - this.#now()));
      const waiter: Waiter = {
        deadline,
        grant: () => {
          clearTimeout(timer);
          resolve();
        },
        expire: () => {
          clearTimeout(timer);
          reject(embeddingError(`${this.#options.source} did not answer in time: every request slot stayed busy (${this.#options.concurrency} in flight)`));
        },
      };
      this.#waiting.push(waiter);
    });
  }

  #release(): void {
    // The slot passes straight to the next waiter that can still use it.
    for (let next = this.#waiting.shift(); next !== undefined; next = this.#waiting.shift()) {
      if (next.deadline - this.#now() >= MIN_USEFUL_MS) {
        next.grant();
        return;
      }
      next.expire();
    }
    this.#inFlight -= 1;
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }
}
