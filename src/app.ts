import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { resourceMetadataUrl } from './auth/challenge.js';
import type { TokenVerifier } from './auth/token-verifier.js';
import type { Config } from './config/load-config.js';
import { mcpRoute } from './http/mcp-route.js';
import { allowedOriginSet } from './http/origin.js';
import { wellKnownRoutes } from './http/well-known.js';
import { createDispatcher, type ServerInfo } from './mcp/dispatcher.js';
import type { Tool } from './mcp/tool.js';
import type { Logger } from './logger.js';
import { SERVICE_NAME, SERVICE_VERSION } from './version.js';

export interface AppDependencies {
  readonly tools: readonly Tool[];
  /** Undefined when no authorization server is configured. */
  readonly verifier: TokenVerifier | undefined;
  readonly logger: Logger;
}

export const INSTRUCTIONS = [
  'This server is a durable memory of facts about the user, kept across conversations.',
  'Call `recall` before answering anything that may depend on what the user told you earlier (preferences, biography, relationships, plans, past decisions).',
  'Call `remember` when the user asks you to remember something, or states a lasting fact about themselves worth keeping; one self-contained fact per call, never secrets.',
].join(' ');

/** Builds the HTTP application; the process concerns (listen, signals) live in cli/serve.ts. */
export async function buildApp(config: Config, deps: AppDependencies): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: config.http.maxBodyBytes,
  });

  const serverInfo: ServerInfo = {
    name: SERVICE_NAME,
    title: 'Memory Service',
    version: SERVICE_VERSION,
    instructions: INSTRUCTIONS,
  };
  await app.register(wellKnownRoutes, {
    resourceUrl: config.resourceUrl,
    authorizationServer: config.oauth.authorizationServer,
  });
  await app.register(mcpRoute, {
    dispatcher: createDispatcher(serverInfo, deps.tools),
    verifier: deps.verifier,
    resourceMetadata: resourceMetadataUrl(config.baseUrl),
    allowedOrigins: allowedOriginSet(config.baseUrl, config.http.allowedOrigins),
    maxBodyBytes: config.http.maxBodyBytes,
  });
  return app;
}
