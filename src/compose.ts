import type { PGlite } from '@electric-sql/pglite';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { localKeyResolver } from './auth/local-keys.js';
import { SIGNING_ALG, StateFile } from './auth/state-file.js';
import { createJwtVerifier, type TokenVerifier } from './auth/token-verifier.js';
import type { Config } from './config/load-config.js';
import { openDatabase, type DatabaseHandle } from './db/open-database.js';
import { createEmbeddingProvider } from './embeddings/create-provider.js';
import type { EmbeddingProvider } from './embeddings/provider.js';
import { createLogger, type Logger } from './logger.js';
import { MemoryService } from './memory/memory-service.js';
import { recallTool } from './tools/recall.js';
import { rememberTool } from './tools/remember.js';

export interface Service {
  readonly app: FastifyInstance;
  readonly db: DatabaseHandle;
  readonly embedder: EmbeddingProvider;
  readonly memory: MemoryService;
  readonly stateFile: StateFile | undefined;
  close(): Promise<void>;
}

export interface ComposeOptions {
  readonly logger?: Logger;
  /** Tests inject these to share one PGlite per file or a stub provider at a network edge. */
  readonly pglite?: PGlite;
  readonly embedder?: EmbeddingProvider;
}

/** The composition root: configuration in, a wired application out. */
export async function composeService(config: Config, options: ComposeOptions = {}): Promise<Service> {
  const embedder = options.embedder ?? createEmbeddingProvider(config.embedding);
  await embedder.ready();
  const db = await openDatabase({
    ...config.database,
    embeddingDimensions: embedder.dimensions,
    pglite: options.pglite,
  });
  const stateFile = config.oauth.builtIn ? new StateFile(config.oauth.asIniFile) : undefined;
  if (stateFile !== undefined) await stateFile.current();
  const verifier = createVerifier(config, stateFile);

  const logger = options.logger ?? createLogger('silent');
  const memory = new MemoryService({
    db,
    embedder,
    nearDuplicateThreshold: config.memory.nearDuplicateThreshold,
    // Only the database's own message and code: never parameters, which hold memory text.
    onDatabaseError: (error) =>
      logger.error({ err: { message: (error as Error).message, code: (error as { code?: string }).code } }, 'database error'),
  });
  const app = await buildApp(config, {
    tools: [rememberTool(memory, config.memory.maxTextChars), recallTool(memory)],
    verifier,
    logger,
  });

  return {
    app,
    db,
    embedder,
    memory,
    stateFile,
    async close() {
      await app.close();
      await db.close();
      await embedder.close();
    },
  };
}

function createVerifier(config: Config, stateFile: StateFile | undefined): TokenVerifier | undefined {
  const issuer = config.oauth.authorizationServer;
  if (issuer === undefined) return undefined;
  if (stateFile !== undefined) {
    return createJwtVerifier({
      issuer,
      audience: config.oauth.audience,
      subjectClaim: config.oauth.subjectClaim,
      getKey: localKeyResolver(stateFile),
      algorithms: [SIGNING_ALG],
      requireAccessTokenType: true,
    });
  }
  throw new Error('external authorization servers are not wired yet');
}
