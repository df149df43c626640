/**
 * What bounds the built-in authorization server, whose endpoints anyone can call without a token: per-address
 * request budgets, lifetimes, and caps on what it stores. Every figure is documented in the README
 * ("Bounds and limits"); tests and benchmarks pass smaller or larger ones.
 */
export interface AuthorizationServerLimits {
  /** Requests per client address and minute, per endpoint group (each group its own budget, per process). */
  readonly perMinute: {
    /** GET/POST /authorize and its resumption after sign-in and consent. */
    readonly authorize: number;
    readonly token: number;
    readonly registration: number;
    readonly revocation: number;
    /** The sign-in and consent pages (GET) and the consent form. */
    readonly interaction: number;
    /** The sign-in form, which checks a password (failed sign-ins are throttled on top: see LoginThrottle). */
    readonly login: number;
    /** Discovery documents and the key set: static, but still not free. */
    readonly discovery: number;
  };
  /** A sign-in in progress (login and consent pages) expires after this. */
  readonly interactionTtlSeconds: number;
  /** A sign-in session (the browser's, skipping the password for the next authorization) expires after this. */
  readonly sessionTtlSeconds: number;
  /** Interactions kept per generation; past it, the oldest are dropped (their pages say the sign-in expired). */
  readonly maxInteractions: number;
  /** Live interactions one address may have; past it, /authorize answers 429 for that address. */
  readonly maxInteractionsPerAddress: number;
  /** Sign-in sessions kept per generation; past it, the oldest are dropped (those browsers sign in again). */
  readonly maxSessions: number;
  /**
   * Registered clients kept per generation; past it, registering drops the oldest client that never obtained a
   * token, and when every client has, registration answers 503.
   */
  readonly maxClients: number;
  /** A registered client that never obtains a token expires after this. */
  readonly unusedClientTtlSeconds: number;
  /** A client that obtained a token expires this long after it last did. */
  readonly idleClientTtlSeconds: number;
  /** Largest registration request body, in bytes. */
  readonly maxRegistrationBytes: number;
}

const DAY = 24 * 60 * 60;

export const DEFAULT_LIMITS: AuthorizationServerLimits = {
  perMinute: { authorize: 60, token: 600, registration: 20, revocation: 60, interaction: 60, login: 30, discovery: 600 },
  interactionTtlSeconds: 10 * 60,
  sessionTtlSeconds: DAY,
  maxInteractions: 10_000,
  maxInteractionsPerAddress: 100,
  maxSessions: 10_000,
  maxClients: 5_000,
  unusedClientTtlSeconds: DAY,
  idleClientTtlSeconds: 90 * DAY,
  maxRegistrationBytes: 16 * 1024,
};

/** DEFAULT_LIMITS with some figures replaced (tests, benchmarks). */
export function withLimits(overrides: Partial<Omit<AuthorizationServerLimits, 'perMinute'>> & { perMinute?: Partial<AuthorizationServerLimits['perMinute']> } = {}): AuthorizationServerLimits {
  return { ...DEFAULT_LIMITS, ...overrides, perMinute: { ...DEFAULT_LIMITS.perMinute, ...overrides.perMinute } };
}
