import { createServer } from 'node:net';
import { composeService } from '../compose.js';
import type { Config } from '../config/load-config.js';
import { redactCredentials } from '../config/redact.js';
import { createLogger } from '../logger.js';
import { endOfLifeNotice } from '../runtime-support.js';
import { StartError } from './command.js';

/** Owns the process: logger, listen, graceful shutdown on SIGTERM/SIGINT (in-flight requests drain). */
export async function serveCommand(config: Config): Promise<number> {
  // A port in use is told before seconds of loading the model, not after (the listens below still check).
  await listenable(config.host, config.port, 'Port');
  if (config.metrics.port !== undefined) await listenable(config.metrics.host, config.metrics.port, 'MetricsPort');
  const logger = createLogger(config.logLevel);
  const endOfLife = endOfLifeNotice();
  if (endOfLife !== undefined) logger.warn(endOfLife);
  const service = await composeService(config, { logger });
  const { app } = service;
  try {
    await listenOrExplain(() => app.listen({ host: config.host, port: config.port }), config.host, config.port, 'Port');
    const metricsPort = config.metrics.port;
    if (service.metricsApp !== undefined && metricsPort !== undefined) {
      const { metricsApp } = service;
      await listenOrExplain(() => metricsApp.listen({ host: config.metrics.host, port: metricsPort }), config.metrics.host, metricsPort, 'MetricsPort');
    }
  } catch (error) {
    // Everything the start opened is closed, so the process ends (and the data folder's lock is released).
    await service.close();
    throw error;
  }
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

/** Binds and releases host:port, or throws the StartError a listen there would. */
async function listenable(host: string, port: number, setting: string): Promise<void> {
  const probe = createServer();
  await listenOrExplain(
    () =>
      new Promise<void>((resolve, reject) => {
        probe.once('error', reject);
        probe.listen({ host, port }, resolve);
      }),
    host,
    port,
    setting,
  );
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

async function listenOrExplain(listen: () => Promise<unknown>, host: string, port: number, setting: string): Promise<void> {
  try {
    await listen();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const variable = `MEMORY_SERVICE_${setting.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase()}`;
    const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    const hostSetting = setting === 'Port' ? 'Host' : 'MetricsHost';
    switch (code) {
      case 'EADDRINUSE':
        throw new StartError(`cannot listen on ${where}: the port is already in use; stop what listens there or choose another ${setting} (${variable})`);
      case 'EACCES':
        throw new StartError(`cannot listen on ${where}: permission denied (ports below 1024 need privileges); choose a ${setting} of 1024 or more (${variable})`);
      case 'EADDRNOTAVAIL':
      case 'ENOTFOUND':
        throw new StartError(`cannot listen on ${where}: ${host} is not an address of this machine; correct ${hostSetting} (0.0.0.0 for every address)`);
      default:
        throw new StartError(`cannot listen on ${where}: ${(error as Error).message}`);
    }
  }
}
