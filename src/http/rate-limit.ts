import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';

/**
 * Fixed one-minute windows counted in memory (an LRU of at most KEYS keys, so memory stays bounded
 * however many subjects or addresses call). Past the limit the answer is 429 with `Retry-After` (seconds)
 * and `x-ratelimit-*` headers; the body is whatever the route's error handler makes of the error.
 */
const WINDOW_MS = 60_000;
const KEYS = 10_000;

/**
 * Registers the limiter on the root instance (not as an encapsulated plugin, so every route can use it),
 * without limiting any route by itself.
 */
export async function registerRateLimit(app: FastifyInstance): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    cache: KEYS,
    timeWindow: WINDOW_MS,
    errorResponseBuilder: (_request, context) =>
      Object.assign(new Error(`Rate limit exceeded: at most ${context.max} requests per minute; retry in ${Math.max(1, Math.ceil(context.ttl / 1000))} s`), {
        statusCode: context.statusCode,
        code: 'RATE_LIMITED',
      }),
  });
}

/**
 * An onRequest hook allowing `perMinute` requests per key and minute. Put it after the hook that
 * authenticates, so `key` can use `request.auth`.
 */
export function rateLimitHook(
  app: FastifyInstance,
  perMinute: number,
  key: (request: FastifyRequest) => string,
): onRequestAsyncHookHandler {
  return app.rateLimit({ max: perMinute, timeWindow: WINDOW_MS, keyGenerator: key, cache: KEYS }) as onRequestAsyncHookHandler;
}

/** For /mcp: per subject (the memory owner), after token verification. */
export function subjectRateLimit(app: FastifyInstance, perMinute: number): onRequestAsyncHookHandler {
  return rateLimitHook(app, perMinute, (request) => `mcp:${request.auth?.subject ?? `ip:${request.ip}`}`);
}

/**
 * For the authorization server's endpoints, which have no subject yet: per client address (X-Forwarded-For only
 * from TrustProxy). Each call makes its own counters, named `bucket`: attach one hook to every route that shares
 * the budget.
 */
export function addressRateLimit(app: FastifyInstance, perMinute: number, bucket: string): onRequestAsyncHookHandler {
  return rateLimitHook(app, perMinute, (request) => `${bucket}:${request.ip}`);
}
