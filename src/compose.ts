import type { PGlite } from '@electric-sql/pglite';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { ClientMetadataFetchOptions } from './auth/authorization-server/client-metadata-fetch.js';
import { AccountRevocation, refusingRevoked } from './auth/authorization-server/account-revocation.js';
import { SESSION_COOKIE } from './auth/authorization-server/endpoints.js';
import type { AuthorizationServerLimits } from './auth/authorization-server/limits.js';
import type { AuthorizationServerOptions } from './auth/authorization-server/routes.js';
import { SIGNING_ALG, StateFile } from './auth/authorization-server/state-file.js';
import { UserStore, usersFilePath } from './auth/authorization-server/user-store.js';
import { WEB_CLIENT_ID, webClientSecret } from './auth/authorization-server/web-client.js';
import { createExternalVerifier } from './auth/resource-server/external-verifier.js';
import { PERSONAL_SPACE_SCOPE } from './auth/scopes.js';
import { localKeyResolver } from './auth/resource-server/local-key-resolver.js';
import { createJwtVerifier, type TokenVerifier } from './auth/resource-server/token-verifier.js';
import { withVerificationCache } from './auth/resource-server/verification-cache.js';
import type { Config } from './config/load-config.js';
import type { DatabaseHandle } from './db/open-database.js';
import { createEmbeddingProvider } from './embeddings/create-provider.js';
import { instrumentProvider } from './embeddings/instrumented-provider.js';
import type { EmbeddingProvider } from './embeddings/provider.js';
import { buildMetricsApp } from './http/metrics.js';
import { loopbackHostCheck } from './http/origin.js';
import { addressRateLimit, rateLimit } from './http/rate-limit.js';
import { createLogger, type Logger } from './logger.js';
import { MemoryService } from './memory/memory-service.js';
import { loadDictionary } from './memory/wordnet.js';
import { ServiceMetrics } from './metrics/service-metrics.js';
import { openStorage, type Storage } from './open-storage.js';
import { briefPrompt, briefTool } from './tools/brief.js';
import { confirmTool } from './tools/confirm.js';
import { correctTool } from './tools/correct.js';
import { forgetTool } from './tools/forget.js';
import { listMemoriesTool } from './tools/list-memories.js';
import { recallTool } from './tools/recall.js';
import { rememberTool } from './tools/remember.js';
import { spacesTool } from './tools/spaces.js';
import { SpaceService, SUBJECTS_AS_NAMES, type PeopleDirectory } from './spaces/space-service.js';
import { WEB_CALLBACK_PATH, type WebPageOptions, type WebSignIn } from './web/routes.js';
import { WebSessions } from './web/sessions.js';

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
  /** The built-in authorization server's bounds, when not the defaults (tests, benchmarks). */
  readonly authorizationServerLimits?: AuthorizationServerLimits;
  /** The network edge of client metadata document fetches (tests: a CA to trust, a resolver). */
  readonly clientMetadataConnect?: ClientMetadataFetchOptions['connect'];
  /** Sign-ins one address may start on the web page per minute (default 30; tests that sign in often raise it). */
  readonly webSignInPerMinute?: number;
  /** Benchmarks lower it to send small subjects down the index path (see vectorRanking, findNearMemories). */
  readonly exactScanLimit?: number;
}

/** Sign-ins a client address may start on the web page per minute (the authorization server counts its own). */
const WEB_SIGN_IN_PER_MINUTE = 30;

/** The composition root: configuration in, a wired application out. */
export async function composeService(config: Config, options: ComposeOptions = {}): Promise<Service> {
  const metrics = new ServiceMetrics();
  const logger = options.logger ?? createLogger('silent');
  // Before the storage opens: a state file that cannot be used refuses the start with nothing to close.
  const stateFile = config.oauth.builtIn
    ? new StateFile(config.oauth.asIniFile, { onUnusable: (reason) => logger.error(reason) })
    : undefined;
  await stateFile?.open();
  let storage: Storage | undefined;
  try {
    storage = await openStorage(config, {
      embedder: instrumentProvider(options.embedder ?? createEmbeddingProvider(config.embedding, logger), metrics),
      pglite: options.pglite,
      logger,
    });
    return await composeOnStorage(config, options, { metrics, logger, stateFile, storage });
  } catch (error) {
    // A start that fails leaves nothing open behind it: the state file's watch, the data folder's lock, the
    // model's worker threads or the pool would keep the process alive (openStorage closes its own on failure).
    stateFile?.close();
    await storage?.close().catch(() => undefined);
    throw error;
  }
}

async function composeOnStorage(
  config: Config,
  options: ComposeOptions,
  parts: { metrics: ServiceMetrics; logger: Logger; stateFile: StateFile | undefined; storage: Storage },
): Promise<Service> {
  const { metrics, logger, stateFile, storage } = parts;
  const { db, embedder } = storage;
  metrics.watchPool(() => db.poolStats());
  const users = stateFile === undefined ? undefined : new UserStore(usersFilePath(config.dataDir));
  const revocation = users === undefined ? undefined : new AccountRevocation(db, users);
  const verifier = cachedVerifier(createVerifier(config, stateFile, users, logger), stateFile, revocation);
  const memory = new MemoryService({
    db,
    embedder,
    nearDuplicateThreshold: config.memory.nearDuplicateThreshold,
    quota: config.memory.quota,
    ...(options.exactScanLimit === undefined ? {} : { exactScanLimit: options.exactScanLimit }),
    // The database error itself is logged where it happens (open-storage); this says what becomes of the work.
    onTermsError: (error) => logger.warn({ err: { message: (error as Error).message } }, 'writing a stored memory’s words failed; trying again in a few seconds'),
    onRecallCountError: (error) => logger.warn({ err: { message: (error as Error).message } }, 'counting a recall failed; the recall was answered'),
  });
  const spaces = new SpaceService(db, users === undefined ? SUBJECTS_AS_NAMES : userDirectory(users));
  // A crash between a remember's steps left some memory findable by its vector but not yet by all its words.
  await memory.completePendingTerms();
  await loadDictionary();
  const signIn = webSignIn(config, { stateFile, verifier, db });
  const app = await buildApp(config, {
    tools: [
      rememberTool(memory, config.memory.maxTextChars),
      recallTool(memory),
      listMemoriesTool(memory),
      correctTool(memory, config.memory.maxTextChars),
      forgetTool(memory),
      confirmTool(memory),
      briefTool(memory),
      spacesTool(spaces),
    ],
    prompts: [briefPrompt(memory)],
    verifier,
    logger,
    metrics,
    health: { database: () => db.ready(), embeddings: () => embedder.ready() },
    authorizationServer: builtInAuthorizationServer(config, { stateFile, users, db, logger, options, webPageOn: signIn.on, spaces }),
    web: webPage(config, { memory, spaces, signIn, users, revocation, logger, signInPerMinute: options.webSignInPerMinute ?? WEB_SIGN_IN_PER_MINUTE }),
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
      await memory.close();
      stateFile?.close();
      await storage.close();
    },
  };
}

/** People named by their user names (the built-in server): a space is shared by name, and shows names. */
function userDirectory(users: UserStore): PeopleDirectory {
  return {
    subjectOf: (name) => users.findByName(name)?.id,
    nameOf: (subject) => users.findById(subject)?.name,
  };
}

function builtInAuthorizationServer(
  config: Config,
  parts: {
    stateFile: StateFile | undefined;
    users: UserStore | undefined;
    db: DatabaseHandle;
    logger: Logger;
    options: ComposeOptions;
    webPageOn: boolean;
    spaces: SpaceService;
  },
): AuthorizationServerOptions | undefined {
  const { stateFile, users, db, logger, options, webPageOn, spaces } = parts;
  if (!config.oauth.builtIn || stateFile === undefined || users === undefined) return undefined;
  return {
    issuer: config.baseUrl,
    resource: config.resourceUrl,
    audience: config.oauth.audience,
    stateFile,
    users,
    db,
    logger,
    limits: options.authorizationServerLimits,
    clientMetadata: { allowedHosts: config.oauth.clientMetadataAllowedHosts, connect: options.clientMetadataConnect },
    perAddressLimit: addressRateLimit,
    webRedirectUri: webPageOn ? `${config.baseUrl}${WEB_CALLBACK_PATH}` : undefined,
    spacesOf: async (subject) =>
      (await spaces.list(subject)).map((space) => ({ scope: space.personal ? PERSONAL_SPACE_SCOPE : space.id, name: space.name, role: space.role })),
  };
}

/**
 * How the page signs people in: as the built-in authorization server's own first-party client (its secret
 * follows the state file), or as the client the operator registered at an external server. Off otherwise.
 */
function webSignIn(
  config: Config,
  deps: { stateFile: StateFile | undefined; verifier: TokenVerifier | undefined; db: DatabaseHandle },
): WebSignIn {
  const issuer = config.oauth.authorizationServer;
  const { verifier, stateFile } = deps;
  if (issuer === undefined || verifier === undefined) return { on: false, reason: 'no authorization server is configured (OAuthAuthorizationServer).' };
  const secure = new URL(config.baseUrl).protocol === 'https:';
  if (stateFile !== undefined) {
    const secret = async () => webClientSecret(await stateFile.current());
    return {
      on: true,
      client: { issuer, inProcess: true, credentials: async () => ({ clientId: WEB_CLIENT_ID, clientSecret: await secret() }) },
      verifier,
      sessions: new WebSessions({ db: deps.db, secure, issuer, secret }),
    };
  }
  const { clientId, clientSecret } = config.web;
  if (clientId === undefined || clientSecret === undefined) {
    return { on: false, reason: 'the external authorization server needs a client for it (WebClientId, MEMORY_SERVICE_WEB_CLIENT_SECRET).' };
  }
  return {
    on: true,
    client: { issuer, inProcess: false, credentials: async () => ({ clientId, clientSecret }) },
    verifier,
    sessions: new WebSessions({ db: deps.db, secure, issuer, secret: async () => clientSecret }),
  };
}

function webPage(
  config: Config,
  deps: { memory: MemoryService; spaces: SpaceService; signIn: WebSignIn; users: UserStore | undefined; revocation: AccountRevocation | undefined; logger: Logger; signInPerMinute: number },
): WebPageOptions {
  const { users, revocation } = deps;
  const perMinute = config.http.rateLimitPerMinute;
  return {
    baseUrl: config.baseUrl,
    resource: config.resourceUrl,
    memory: deps.memory,
    spaces: deps.spaces,
    membershipClaim: config.oauth.membershipClaim,
    signIn: deps.signIn,
    maxTextChars: config.memory.maxTextChars,
    maxBodyBytes: config.http.maxBodyBytes,
    importMaxBytes: config.web.importMaxBytes,
    // A removed user, or one whose password changed since, is signed out of the page at once (their tokens are refused too).
    accountActive:
      users === undefined
        ? undefined
        : (subject, signedInAt) => {
            const user = users.findById(subject);
            return user !== undefined && Date.parse(user.passwordChangedAt) <= signedInAt.getTime() + 1000;
          },
    accountName: users === undefined ? undefined : (subject) => users.findById(subject)?.name,
    // The built-in server shares the page's origin, so its session cookie comes with the page's requests.
    endAuthorizationSession: revocation === undefined ? undefined : (request, subject) => revocation.endSession(subject, request.cookies[SESSION_COOKIE]),
    revokeSubject: revocation === undefined ? undefined : (subject) => revocation.revokeEverything(subject),
    hostAllowed: loopbackHostCheck(config.baseUrl, config.host),
    perAddressLimit: addressRateLimit(deps.signInPerMinute),
    perSubjectLimit: perMinute > 0 ? rateLimit(perMinute, (request) => request.webSession?.subject ?? `ip:${request.ip}`) : undefined,
    logger: deps.logger,
  };
}

function createVerifier(config: Config, stateFile: StateFile | undefined, users: UserStore | undefined, logger: Logger): TokenVerifier | undefined {
  const issuer = config.oauth.authorizationServer;
  if (issuer === undefined) return undefined;
  if (stateFile !== undefined && users !== undefined) {
    const jwt = createJwtVerifier({
      issuer,
      audience: config.oauth.audience,
      subjectClaim: config.oauth.subjectClaim,
      membershipClaim: config.oauth.membershipClaim,
      getKey: localKeyResolver(async () => (await stateFile.current()).signingKey),
      algorithms: [SIGNING_ALG],
      requireAccessTokenType: true,
    });
    return refusingRevoked(jwt, users);
  }
  const external = createExternalVerifier({
    issuer,
    audience: config.oauth.audience,
    subjectClaim: config.oauth.subjectClaim,
    membershipClaim: config.oauth.membershipClaim,
  });
  // Discovered now so a misconfiguration shows in the log at startup; requests retry it if this fails.
  external.discover().then(
    (metadata) => logger.info({ issuer, jwksUri: metadata.jwks_uri }, 'external authorization server discovered'),
    (error: unknown) => logger.warn({ issuer, err: { message: (error as Error).message } }, 'external authorization server discovery failed; will retry'),
  );
  return external;
}

/**
 * Verdicts reused briefly (see verification-cache.ts); under the built-in server, only while its key is the same, as
 * the watch on the state file knows it (a cached token costs no file system access), and until this process revokes
 * someone's tokens.
 */
function cachedVerifier(verifier: TokenVerifier | undefined, stateFile: StateFile | undefined, revocation: AccountRevocation | undefined): TokenVerifier | undefined {
  if (verifier === undefined) return undefined;
  if (stateFile === undefined) return withVerificationCache(verifier);
  // The same string while nothing changed: this runs on every request.
  let named = { key: '', revision: -1, generation: '' };
  const generation = (key: string): string => {
    const revision = revocation?.revision ?? 0;
    if (named.key !== key || named.revision !== revision) named = { key, revision, generation: `${key}/${revision}` };
    return named.generation;
  };
  return withVerificationCache(verifier, {
    keyGeneration: () => {
      const key = stateFile.currentKeyId();
      return key instanceof Promise ? key.then(generation) : generation(key);
    },
  });
}
