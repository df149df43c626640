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
  readonly token: string;
  readonly auth: AuthInfo;
  readonly generation: string | undefined;
  readonly validUntil: number;
}

const KEY_LENGTH = 32;

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
  // Keyed by the token's last characters (a JWT's signature), and the whole token compared on a hit: hashing a
  // whole token of ~450 characters for the map cost more than half a microsecond on every request.
  const cache = new Map<string, Entry>();
  const keyOf = (token: string) => token.slice(-KEY_LENGTH);

  const verifyUnder = (token: string, generation: string | undefined): AuthInfo | Promise<AuthInfo> => {
    const at = now();
    const key = keyOf(token);
    const hit = cache.get(key);
    if (hit !== undefined && hit.token === token) {
      cache.delete(key);
      if (hit.generation === generation && at < hit.validUntil) {
        cache.set(key, hit);
        return hit.auth;
      }
    }
    return Promise.resolve(inner.verify(token)).then((auth) => {
      const expiresAt = auth.expiresAt === undefined ? Number.POSITIVE_INFINITY : auth.expiresAt * 1000;
      cache.delete(key);
      cache.set(key, { token, auth, generation, validUntil: Math.min(at + maxAgeMs, expiresAt) });
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
