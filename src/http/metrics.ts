import { timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { ServiceMetrics } from '../metrics/service-metrics.js';

/** Records every response's route and status on the root instance (unmatched routes share one label). */
export function addHttpMetrics(app: FastifyInstance, metrics: ServiceMetrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeHttp(request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

export interface MetricsRouteOptions {
  readonly metrics: ServiceMetrics;
  /** Bearer token required on this listener; undefined = no check (a separate, private listener only). */
  readonly token: string | undefined;
}

/** GET /metrics in the Prometheus text format. */
export async function metricsRoute(app: FastifyInstance, options: MetricsRouteOptions): Promise<void> {
  const expected = options.token === undefined ? undefined : Buffer.from(`Bearer ${options.token}`);
  app.get('/metrics', async (request, reply) => {
    if (expected !== undefined) {
      const given = Buffer.from(request.headers.authorization ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return reply.code(401).header('www-authenticate', 'Bearer realm="metrics"').send({ error: 'a valid metrics bearer token is required' });
      }
    }
    const { contentType, body } = await options.metrics.render();
    return reply.header('content-type', contentType).header('cache-control', 'no-store').send(body);
  });
}

/** The separate metrics listener (MetricsPort): nothing but GET /metrics, unauthenticated. */
export async function buildMetricsApp(metrics: ServiceMetrics, logger: FastifyBaseLogger): Promise<FastifyInstance> {
  // Scrapes come every few seconds: only warnings and errors are worth a log line.
  const app = Fastify({ loggerInstance: logger.child({ listener: 'metrics' }, { level: 'warn' }) });
  await app.register(metricsRoute, { metrics, token: undefined });
  return app;
}
