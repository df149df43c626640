import type { PGlite } from '@electric-sql/pglite';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { AuthorizationServerOptions } from './auth/authorization-server/routes.js';
import { SIGNING_ALG, StateFile } from './auth/authorization-server/state-file.js';
import { UserStore, usersFilePath } from './auth/authorization-server/user-store.js';
import { createExternalVerifier } from './auth/resource-server/external-verifier.js';
import { localKeyResolver } from './auth/resource-server/local-key-resolver.js';
import { createJwtVerifier, type TokenVerifier } from './auth/resource-server/token-verifier.js';
import { withVerificationCache } from './auth/resource-server/verification-cache.js';
import type { Config } from './config/load-config.js';
import type { DatabaseHandle } from './db/open-database.js';
import { createEmbeddingProvider } from './embeddings/create-provider.js';
import { instrumentProvider } from './embeddings/instrumented-provider.js';
import type { EmbeddingProvider } from './embeddings/provider.js';
import { buildMetricsApp } from './http/metrics.js';
import { loginRateLimit } from './http/rate-limit.js';
import { createLogger, type Logger } from './logger.js';
import { MemoryService } from './memory/memory-service.js';
import { ServiceMetrics } from './metrics/service-metrics.js';
import { openStorage } from './open-storage.js';
import { confirmTool } from './tools/confirm.js';
import { correctTool } from './tools/correct.js';
import { forgetTool } from './tools/forget.js';
import { listMemoriesTool } from './tools/list-memories.js';
import { recallTool } from './tools/recall.js';
import { rememberTool } from './tools/remember.js';

export interface Service {
  readonly app: FastifyInstance;
  readonly db: DatabaseHandle;
  readonly embedder: EmbeddingProvider;
  readonly stateFile: StateFile | undefined;
  readonly metrics: ServiceMetrics;
  /** The separate /metrics listener (MetricsPort), for serve to listen on; undefined when not configured. */
  readonly metricsApp: FastifyInstance | undefined;
  close(): Promise<void>;
}

export interface ComposeOptions {
  readonly logger?: Logger;
  /** Tests inject these to share one PGlite per file or a stub provider at a network edge. */
  readonly pglite?: PGlite;
  readonly embedder?: EmbeddingProvider;
  /** Benchmarks lower it to send small subjects down the index path (see vectorRanking, findNearMemories). */
  readonly exactScanLimit?: number;
}

/** The composition root: configuration in, a wired application out. */
export async function composeService(config: Config, options: ComposeOptions = {}): Promise<Service> {
  const metrics = new ServiceMetrics();
  const logger = options.logger ?? createLogger('silent');
  const storage = await openStorage(config, {
    embedder: instrumentProvider(options.embedder ?? createEmbeddingProvider(config.embedding), metrics),
    pglite: options.pglite,
    logger,
  });
  const { db, embedder } = storage;
  metrics.watchPool(() => db.poolStats());
  const stateFile = config.oauth.builtIn ? new StateFile(config.oauth.asIniFile) : undefined;
  if (stateFile !== undefined) await stateFile.current();
  const verifier = cachedVerifier(createVerifier(config, stateFile, logger), stateFile);
  const memory = new MemoryService({
    db,
    embedder,
    nearDuplicateThreshold: config.memory.nearDuplicateThreshold,
    ...(options.exactScanLimit === undefined ? {} : { exactScanLimit: options.exactScanLimit }),
  });
  const app = await buildApp(config, {
    tools: [
      rememberTool(memory, config.memory.maxTextChars),
      recallTool(memory),
      listMemoriesTool(memory),
      correctTool(memory, config.memory.maxTextChars),
      forgetTool(memory),
      confirmTool(memory),
    ],
    verifier,
    logger,
    metrics,
    health: { database: () => db.ready(), embeddings: () => embedder.ready() },
    authorizationServer: builtInAuthorizationServer(config, stateFile, logger),
  });
  const metricsApp = config.metrics.port === undefined ? undefined : await buildMetricsApp(metrics, logger as FastifyBaseLogger);

  return {
    app,
    db,
    embedder,
    stateFile,
    metrics,
    metricsApp,
    async close() {
      await Promise.all([app.close(), metricsApp?.close()]);
      await storage.close();
    },
  };
}

function builtInAuthorizationServer(config: Config, stateFile: StateFile | undefined, logger: Logger): AuthorizationServerOptions | undefined {
  if (!config.oauth.builtIn || stateFile === undefined) return undefined;
  return {
    issuer: config.baseUrl,
    resource: config.resourceUrl,
    audience: config.oauth.audience,
    stateFile,
    users: new UserStore(usersFilePath(config.dataDir)),
    logger,
    perAddressLimit: (app) => loginRateLimit(app),
  };
}

function createVerifier(config: Config, stateFile: StateFile | undefined, logger: Logger): TokenVerifier | undefined {
  const issuer = config.oauth.authorizationServer;
  if (issuer === undefined) return undefined;
  if (stateFile !== undefined) {
    return createJwtVerifier({
      issuer,
      audience: config.oauth.audience,
      subjectClaim: config.oauth.subjectClaim,
      getKey: localKeyResolver(async () => (await stateFile.current()).signingKey),
      algorithms: [SIGNING_ALG],
      requireAccessTokenType: true,
    });
  }
  const external = createExternalVerifier({ issuer, audience: config.oauth.audience, subjectClaim: config.oauth.subjectClaim });
  // Discovered now so a misconfiguration shows in the log at startup; requests retry it if this fails.
  external.discover().then(
    (metadata) => logger.info({ issuer, jwksUri: metadata.jwks_uri }, 'external authorization server discovered'),
    (error: unknown) => logger.warn({ issuer, err: { message: (error as Error).message } }, 'external authorization server discovery failed; will retry'),
  );
  return external;
}

/** Verdicts reused briefly (see verification-cache.ts); under the built-in server, only while its key is the same. */
function cachedVerifier(verifier: TokenVerifier | undefined, stateFile: StateFile | undefined): TokenVerifier | undefined {
  if (verifier === undefined) return undefined;
  return withVerificationCache(verifier, {
    ...(stateFile === undefined ? {} : { keyGeneration: async () => (await stateFile.current()).signingKey.kid }),
  });
}
