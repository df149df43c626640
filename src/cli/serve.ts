import { composeService } from '../compose.js';
import type { Config } from '../config/load-config.js';
import { redactCredentials } from '../config/redact.js';
import { createLogger } from '../logger.js';

/** Owns the process: logger, listen, graceful shutdown on SIGTERM/SIGINT (in-flight requests drain). */
export async function serveCommand(config: Config): Promise<number> {
  const service = await composeService(config, { logger: createLogger(config.logLevel) });
  const { app } = service;
  await app.listen({ host: config.host, port: config.port });
  const metricsPort = config.metrics.port;
  if (service.metricsApp !== undefined && metricsPort !== undefined) await service.metricsApp.listen({ host: config.metrics.host, port: metricsPort });
  app.log.info(
    {
      baseUrl: redactCredentials(config.baseUrl),
      database: config.database.url === undefined ? `pglite:${config.database.dataDir}` : 'postgres',
      embeddingModel: service.embedder.model,
      authorizationServer: redactCredentials(config.oauth.authorizationServer ?? 'not configured (every /mcp request answers 500)'),
    },
    `memory-service listening; MCP endpoint ${redactCredentials(config.resourceUrl)}`,
  );

  return new Promise<number>((resolve) => {
    let closing = false;
    const shutdown = (signal: string) => {
      if (closing) return;
      closing = true;
      app.log.info({ signal }, 'shutting down: draining in-flight requests');
      service.close().then(
        () => resolve(0),
        (error: unknown) => {
          app.log.error({ err: error }, 'error during shutdown');
          resolve(1);
        },
      );
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  });
}
