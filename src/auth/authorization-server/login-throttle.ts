import { normaliseUserName } from './user-store.js';

/**
 * Failed sign-ins are counted per user and address, and per address alone (password spraying), in a fixed
 * window. Past the limit the login form answers 429 with Retry-After until the window ends, even for the
 * right password. In memory: a restart forgets, which costs an attacker a restart of the server, not less.
 */
export interface ThrottleLimits {
  readonly perUserAndAddress: number;
  readonly perAddress: number;
  readonly windowSeconds: number;
  /** Counters kept at most; the oldest are dropped first so a flood cannot exhaust memory. */
  readonly maxTracked: number;
}

export const DEFAULT_THROTTLE: ThrottleLimits = { perUserAndAddress: 5, perAddress: 30, windowSeconds: 15 * 60, maxTracked: 10_000 };

interface Counter {
  failures: number;
  readonly windowEndsAt: number;
}

export class LoginThrottle {
  readonly #limits: ThrottleLimits;
  readonly #counters = new Map<string, Counter>();
  readonly #now: () => number;

  constructor(limits: ThrottleLimits = DEFAULT_THROTTLE, now: () => number = Date.now) {
    this.#limits = limits;
    this.#now = now;
  }

  /** Seconds to wait before trying again, or 0 when a sign-in may be attempted. */
  retryAfter(user: string, address: string): number {
    const waits = [
      this.#wait(userKey(user, address), this.#limits.perUserAndAddress),
      this.#wait(`a:${address}`, this.#limits.perAddress),
    ];
    return Math.max(...waits);
  }

  recordFailure(user: string, address: string): void {
    this.#bump(userKey(user, address));
    this.#bump(`a:${address}`);
  }

  recordSuccess(user: string, address: string): void {
    this.#counters.delete(userKey(user, address));
  }

  #wait(key: string, limit: number): number {
    const counter = this.#live(key);
    if (counter === undefined || counter.failures < limit) return 0;
    return Math.max(1, Math.ceil((counter.windowEndsAt - this.#now()) / 1000));
  }

  #bump(key: string): void {
    const counter = this.#live(key);
    if (counter !== undefined) {
      counter.failures += 1;
      return;
    }
    if (this.#counters.size >= this.#limits.maxTracked) {
      const oldest = this.#counters.keys().next();
      if (oldest.done !== true) this.#counters.delete(oldest.value);
    }
    this.#counters.set(key, { failures: 1, windowEndsAt: this.#now() + this.#limits.windowSeconds * 1000 });
  }

  #live(key: string): Counter | undefined {
    const counter = this.#counters.get(key);
    if (counter !== undefined && counter.windowEndsAt <= this.#now()) {
      this.#counters.delete(key);
      return undefined;
    }
    return counter;
  }
}

/**
 * Keyed on the name sign-in compares, so " bob", "BOB" and "ｂｏｂ" (one user) share one budget. Names that no
 * user can have all share one key (the empty name, which is never valid): varying them buys no extra tries.
 */
function userKey(user: string, address: string): string {
  let name = '';
  try {
    name = normaliseUserName(user);
  } catch {
    // Not a possible user name.
  }
  return `u:${name}|${address}`;
}
