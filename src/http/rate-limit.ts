import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';

/**
 * Fixed one-minute windows counted in memory, at most KEYS keys (past that the key whose window began longest ago
 * is dropped, so memory stays bounded however many subjects or addresses call). Every answer within the limit
 * carries `x-ratelimit-limit`, `-remaining` and `-reset` (seconds); past it the check returns a 429 error with
 * `Retry-After` set, and the body is whatever the route's error handler makes of the error.
 *
 * Synchronous on purpose: /mcp checks it on every request, and @fastify/rate-limit, which this replaces, took
 * four promise turns a request for the same arithmetic (issue 17's overhead).
 */
const WINDOW_MS = 60_000;
const KEYS = 10_000;

/** Checks one request: sets the x-ratelimit-* headers, and returns the 429 error past the limit. */
export type RateLimit = (request: FastifyRequest, reply: FastifyReply) => RateLimitedError | undefined;

export class RateLimitedError extends Error {
  readonly statusCode = 429;
  readonly code = 'RATE_LIMITED';
}

interface Window {
  startedAt: number;
  count: number;
}

/**
 * Allows `perMinute` requests per key and minute. For a per-subject limit, run it after authentication, so `key`
 * can use `request.auth`.
 */
export function rateLimit(perMinute: number, key: (request: FastifyRequest) => string, now: () => number = Date.now): RateLimit {
  // Insertion order is window-start order: a key is re-inserted whenever its window starts again.
  const windows = new Map<string, Window>();
  const limit = String(perMinute);
  return (request, reply) => {
    const name = key(request);
    const at = now();
    let window = windows.get(name);
    if (window === undefined || window.startedAt + WINDOW_MS <= at) {
      windows.delete(name);
      window = { startedAt: at, count: 0 };
      windows.set(name, window);
      if (windows.size > KEYS) windows.delete(windows.keys().next().value!);
    }
    window.count++;
    const resetSeconds = String(Math.max(1, Math.ceil((window.startedAt + WINDOW_MS - at) / 1000)));
    reply.header('x-ratelimit-limit', limit);
    reply.header('x-ratelimit-reset', resetSeconds);
    if (window.count <= perMinute) {
      reply.header('x-ratelimit-remaining', String(perMinute - window.count));
      return undefined;
    }
    reply.header('x-ratelimit-remaining', '0');
    reply.header('retry-after', resetSeconds);
    return new RateLimitedError(`Rate limit exceeded: at most ${perMinute} requests per minute; retry in ${resetSeconds} s`);
  };
}

/** For /mcp: per subject (the memory owner), after token verification. */
export function subjectRateLimit(perMinute: number): RateLimit {
  return rateLimit(perMinute, (request) => request.auth?.subject ?? `ip:${request.ip}`);
}

/**
 * For the authorization server's endpoints, which have no subject yet: per client address (X-Forwarded-For only
 * from TrustProxy). Each call makes its own counters: attach one hook to every route that shares the budget. A
 * refused request goes to the route's error handler.
 */
export function addressRateLimit(perMinute: number): onRequestHookHandler {
  const limit = rateLimit(perMinute, (request) => request.ip);
  return (request, reply, done) => done(limit(request, reply));
}
