import type { FastifyInstance } from 'fastify';

export interface HealthOptions {
  /** Database reachable and migrations current. */
  readonly database: () => Promise<boolean>;
  /** The embedding provider can serve (model loaded, or the OpenAI-compatible server answered). */
  readonly embeddings: () => Promise<void>;
}

/** A check that does not answer within this time counts as failed: a probe must not hang. */
const CHECK_TIMEOUT_MS = 2_000;

/**
 * GET /healthz: the process is alive. GET /readyz: it can serve (200), or not (503), with one boolean per
 * check. Unauthenticated, so they say nothing else: no versions, paths, URLs or error messages.
 */
export async function healthRoutes(app: FastifyInstance, options: HealthOptions): Promise<void> {
  app.get('/healthz', async (_request, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    const [database, embeddings] = await Promise.all([
      withinTimeout(options.database().catch(() => false)),
      withinTimeout(options.embeddings().then(() => true, () => false)),
    ]);
    const ready = database && embeddings;
    return reply
      .code(ready ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status: ready ? 'ready' : 'not_ready', checks: { database, embeddings } });
  });
}

async function withinTimeout(check: Promise<boolean>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([check, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
