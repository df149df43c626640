import type { AuthInfo, TokenVerifier } from './token-verifier.js';

export interface VerificationCacheOptions {
  /** Most tokens remembered; the least recently used goes first. */
  readonly maxEntries?: number;
  /** How long a verdict is reused, at most (never past the token's `exp`). */
  readonly maxAgeMs?: number;
  /**
   * Names the current signing keys (the built-in server's key id): a verdict reached under other keys is
   * not reused, so replacing or deleting the state file refuses old tokens as soon as this sees it (the
   * state file's watch: before the next request, or within a second).
   */
  readonly keyGeneration?: () => string | Promise<string>;
  readonly now?: () => number;
}

interface Entry {
  readonly auth: AuthInfo;
  readonly generation: string | undefined;
  readonly validUntil: number;
}

/**
 * Reuses a successful verification of the exact same token for a short time. A signature check (ES256) costs
 * ~0.2 ms of CPU, more than the rest of a tools/list request; clients send the same token many times a
 * minute. Refusals are never cached, and a cached token still expires at its `exp`. A reused verdict comes back
 * as a value, not a promise, when the key generation is known without a check (the state file's watch saw no change).
 */
export function withVerificationCache(inner: TokenVerifier, options: VerificationCacheOptions = {}): TokenVerifier {
  const maxEntries = options.maxEntries ?? 10_000;
  const maxAgeMs = options.maxAgeMs ?? 60_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, Entry>();

  const verifyUnder = (token: string, generation: string | undefined): AuthInfo | Promise<AuthInfo> => {
    const at = now();
    const hit = cache.get(token);
    if (hit !== undefined) {
      cache.delete(token);
      if (hit.generation === generation && at < hit.validUntil) {
        cache.set(token, hit);
        return hit.auth;
      }
    }
    return Promise.resolve(inner.verify(token)).then((auth) => {
      const expiresAt = auth.expiresAt === undefined ? Number.POSITIVE_INFINITY : auth.expiresAt * 1000;
      cache.set(token, { auth, generation, validUntil: Math.min(at + maxAgeMs, expiresAt) });
      if (cache.size > maxEntries) cache.delete(cache.keys().next().value!);
      return auth;
    });
  };

  return {
    verify(token) {
      const generation = options.keyGeneration?.();
      return generation instanceof Promise ? generation.then((known) => verifyUnder(token, known)) : verifyUnder(token, generation);
    },
  };
}
