import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { authorizationServerRoutes, AUTHORIZATION_SERVER_CORS_PATHS, type AuthorizationServerOptions } from './auth/authorization-server/routes.js';
import { resourceMetadataUrl } from './auth/resource-server/challenge.js';
import type { TokenVerifier } from './auth/resource-server/token-verifier.js';
import type { Config } from './config/load-config.js';
import { AccessLog } from './http/access-log.js';
import { corsHandler } from './http/cors.js';
import { healthRoutes, type HealthOptions } from './http/health.js';
import { mcpRoute } from './http/mcp-route.js';
import { addHttpMetrics, metricsRoute } from './http/metrics.js';
import { allowedOriginSet, loopbackHostCheck } from './http/origin.js';
import { subjectRateLimit } from './http/rate-limit.js';
import { wellKnownRoutes } from './http/well-known.js';
import { requestLogger, type Logger } from './logger.js';
import { createDispatcher, type ServerInfo } from './mcp/dispatcher.js';
import type { Prompt } from './mcp/prompt.js';
import type { Tool } from './mcp/tool.js';
import type { ServiceMetrics } from './metrics/service-metrics.js';
import { SERVICE_NAME, SERVICE_VERSION } from './version.js';
import { webRoutes, type WebPageOptions } from './web/routes.js';

export interface AppDependencies {
  readonly tools: readonly Tool[];
  readonly prompts: readonly Prompt[];
  /** Undefined when no authorization server is configured. */
  readonly verifier: TokenVerifier | undefined;
  readonly logger: Logger;
  /** The built-in authorization server; present only when it is the configured issuer. */
  readonly authorizationServer?: AuthorizationServerOptions | undefined;
  readonly metrics: ServiceMetrics;
  readonly health: HealthOptions;
  /** The person's own page at `{BaseUrl}/` (on, or off with a reason). */
  readonly web: WebPageOptions;
}

/** An incoming X-Request-Id is kept when it is a plain token (so a proxy's id follows the request); else a new one. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

export const INSTRUCTIONS = [
  'This server is a durable memory of facts about the user, kept across conversations.',
  'At the start of every conversation, call `brief` once: it returns a compact brief of what matters most about the user, with memory ids.',
  'Call `recall` before answering anything that may depend on what the user told you earlier (preferences, biography, relationships, plans, past decisions).',
  'Call `remember` when the user asks you to remember something, or states a lasting fact about themselves worth keeping; one self-contained fact per call, never secrets.',
  'When the user says a stored fact is wrong or has changed, call `correct` with its memory_id; `forget` when they ask you to forget it; `confirm` when they reaffirm it; `list_memories` to review what is stored.',
  'Memories live in spaces: every tool works on the user\'s personal space unless given `space`; call `spaces` to see the others (a project, a household, a team) and name one only for what belongs to it.',
].join(' ');

/** Builds the HTTP application; the process concerns (listen, signals) live in cli/serve.ts. */
export async function buildApp(config: Config, deps: AppDependencies): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new AccessLog(deps.logger),
    childLoggerFactory: (logger, bindings, options) => requestLogger(logger as Logger, bindings, options),
    bodyLimit: config.http.maxBodyBytes,
    // X-Forwarded-* only from the configured proxies; BaseUrl, not these headers, names the service.
    trustProxy: config.http.trustProxy.length > 0 ? [...config.http.trustProxy] : false,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
    },
  });
  const builtInServer = config.oauth.builtIn ? deps.authorizationServer : undefined;
  const allowedOrigins = allowedOriginSet(config.baseUrl, config.http.allowedOrigins);
  const cors = corsHandler({ allowedOrigins, publicPaths: builtInServer === undefined ? [] : AUTHORIZATION_SERVER_CORS_PATHS });
  // One hook for what every request needs on the way in (each hook costs a turn of Fastify's hook chain).
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (!cors(request, reply)) done();
  });
  addHttpMetrics(app, deps.metrics);
  await app.register(healthRoutes, deps.health);
  if (config.metrics.token !== undefined) await app.register(metricsRoute, { metrics: deps.metrics, token: config.metrics.token });

  const serverInfo: ServerInfo = {
    name: SERVICE_NAME,
    title: 'Memory Service',
    version: SERVICE_VERSION,
    instructions: INSTRUCTIONS,
  };
  if (builtInServer !== undefined) await app.register(authorizationServerRoutes, builtInServer);
  await app.register(wellKnownRoutes, {
    resourceUrl: config.resourceUrl,
    authorizationServer: config.oauth.authorizationServer,
  });
  await app.register(mcpRoute, {
    dispatcher: createDispatcher(serverInfo, deps.tools, deps.prompts, deps.metrics.dispatchObserver),
    verifier: deps.verifier,
    resourceMetadata: resourceMetadataUrl(config.baseUrl),
    allowedOrigins,
    hostAllowed: loopbackHostCheck(config.baseUrl, config.host),
    rateLimit: config.http.rateLimitPerMinute > 0 ? subjectRateLimit(config.http.rateLimitPerMinute) : undefined,
    maxBodyBytes: config.http.maxBodyBytes,
  });
  await app.register(webRoutes, deps.web);
  return app;
}
