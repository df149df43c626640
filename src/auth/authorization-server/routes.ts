import { createHmac, timingSafeEqual } from 'node:crypto';
import { parse as parseQuery } from 'node:querystring';
import type Provider from 'oidc-provider';
import type { Grant, Interaction } from 'oidc-provider';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { DatabaseHandle } from '../../db/open-database.js';
import type { Logger } from '../../logger.js';
import { DEFAULT_SCOPE, isSpaceScope, parseScopes, SCOPES, spaceScopesOf } from '../scopes.js';
import { clientMetadataFetch, isUrlClientId, type ClientMetadataFetchOptions } from './client-metadata-fetch.js';
import { forceIssuerOrigin, INTERACTION_PATH, ROUTES } from './endpoints.js';
import { DEFAULT_LIMITS, type AuthorizationServerLimits } from './limits.js';
import { LoginThrottle } from './login-throttle.js';
import { OAuthStore, requestAddress } from './oauth-store.js';
import { consentPage, loginPage, messagePage, PAGE_HEADERS, type ClientView, type ConsentSpaces, type PersonSpace } from './pages.js';
import type { ProviderHost } from './provider.js';
import { derivedKey, type AuthorizationServerState, type StateFile } from './state-file.js';
import type { UserStore } from './user-store.js';
import { withoutRuntimeWarning } from '../../runtime-support.js';

export type { PersonSpace } from './pages.js';

export interface AuthorizationServerOptions {
  readonly issuer: string;
  readonly resource: string;
  readonly audience: string;
  readonly stateFile: StateFile;
  readonly users: UserStore;
  /** The service's database: it keeps the authorization server's objects (oauth_objects). */
  readonly db: DatabaseHandle;
  readonly logger: Logger;
  readonly throttle?: LoginThrottle;
  readonly limits?: AuthorizationServerLimits | undefined;
  /** OAuthClientMetadataAllowedHosts, and (tests) the network edge of metadata-document fetches. */
  readonly clientMetadata: Pick<ClientMetadataFetchOptions, 'allowedHosts' | 'connect'>;
  /**
   * Makes a per-client-address request limit (an onRequest hook with counters of its own): every endpoint of the
   * authorization server has one, since anyone can call them without a token.
   */
  readonly perAddressLimit: (perMinute: number) => onRequestHookHandler;
  /** The web page's sign-in callback, when the page is on (it is then a first-party client). */
  readonly webRedirectUri?: string | undefined;
  /** The spaces a person may use, personal first: the consent page names them and offers a choice among them. */
  readonly spacesOf: (subject: string) => Promise<readonly PersonSpace[]>;
}

type Budget = keyof AuthorizationServerLimits['perMinute'];

/** The paths oidc-provider answers itself, handed the raw request untouched, each with its per-address budget. */
const PROVIDER_PATHS: readonly { readonly path: string; readonly budget: Budget }[] = [
  { path: ROUTES.authorization, budget: 'authorize' },
  { path: `${ROUTES.authorization}/:uid`, budget: 'authorize' },
  { path: ROUTES.token, budget: 'token' },
  { path: ROUTES.registration, budget: 'registration' },
  { path: ROUTES.revocation, budget: 'revocation' },
  { path: ROUTES.jwks, budget: 'discovery' },
  { path: '/.well-known/openid-configuration', budget: 'discovery' },
];

/** Endpoints a browser-based public client calls from script (discovery documents are covered by prefix). */
export const AUTHORIZATION_SERVER_CORS_PATHS: readonly string[] = [ROUTES.token, ROUTES.registration, ROUTES.revocation, ROUTES.jwks];

/** The built-in OAuth 2.1 authorization server (issuer = BaseUrl), mounted only when it is the configured one. */
export async function authorizationServerRoutes(app: FastifyInstance, options: AuthorizationServerOptions): Promise<void> {
  const issuer = new URL(options.issuer);
  const limits = options.limits ?? DEFAULT_LIMITS;
  const store = new OAuthStore(options.db, limits, options.logger);
  // Loaded only when mounted: oidc-provider takes time and memory to load, which other commands need not spend.
  const { ProviderHost } = await withoutRuntimeWarning(() => import('./provider.js'));
  const host = new ProviderHost(
    {
      issuer: options.issuer,
      resource: options.resource,
      audience: options.audience,
      limits,
      store,
      clientMetadataFetch: clientMetadataFetch(options.clientMetadata),
      webRedirectUri: options.webRedirectUri,
    },
    options.stateFile,
    options.users,
    options.logger,
  );
  const { state } = await host.current();
  const imported = await store.importLegacySections(state, () => options.stateFile.dropLegacySections());
  if (imported > 0) options.logger.info({ imported }, 'moved registered clients, grants and refresh tokens from the state file into the database');

  await app.register(async (scope) => {
    // oidc-provider reads request bodies itself: leave the stream unread.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    scope.setErrorHandler(rateLimitedAnswer('json'));

    const handToProvider = async (request: FastifyRequest, reply: FastifyReply, url = request.raw.url ?? '/') => {
      const { callback } = await host.current();
      forceIssuerOrigin(request.raw, issuer);
      request.raw.url = url;
      reply.hijack();
      await requestAddress.run(request.ip, () => callback(request.raw, reply.raw));
    };

    const budgets = new Map<Budget, onRequestHookHandler>();
    const limitFor = (budget: Budget) => {
      let hook = budgets.get(budget);
      if (hook === undefined) budgets.set(budget, (hook = options.perAddressLimit(limits.perMinute[budget])));
      return hook;
    };

    for (const { path, budget } of PROVIDER_PATHS) {
      scope.route({
        method: ['GET', 'POST'],
        url: path,
        onRequest: limitFor(budget),
        // The authorization endpoint is a browser's: it gets pages, the others JSON.
        ...(budget === 'authorize' ? { errorHandler: rateLimitedAnswer('page') } : {}),
        handler: async (request, reply) => {
          if (path === ROUTES.authorization) {
            const { generation } = await host.current();
            // Each sign-in in progress is a stored row: one address may not hold more than its share.
            if ((await store.liveInteractionsFrom(generation, request.ip)) >= limits.maxInteractionsPerAddress) {
              return sendPage(reply, 429, messagePage('Too many sign-ins', 'Too many sign-ins are in progress from your address. Finish or close one, or try again in a few minutes.'), {
                'retry-after': String(limits.interactionTtlSeconds),
              });
            }
            return handToProvider(request, reply, withDefaultScope(request.raw.url ?? '/'));
          }
          if (path === ROUTES.registration && request.method === 'POST') {
            const refusal = await registrationRefusal(request, host, store, limits);
            if (refusal !== undefined) return reply.code(refusal.status).header('cache-control', 'no-store').send(refusal.body);
          }
          return handToProvider(request, reply);
        },
      });
    }
    // RFC 8414 metadata is the same document as OpenID discovery (the issuer has no path).
    scope.get('/.well-known/oauth-authorization-server', { onRequest: limitFor('discovery') }, (request, reply) =>
      handToProvider(request, reply, '/.well-known/openid-configuration'),
    );
  });

  await app.register(interactionRoutes, {
    host,
    users: options.users,
    throttle: options.throttle ?? new LoginThrottle(),
    issuer,
    resource: options.resource,
    spacesOf: options.spacesOf,
    pageLimit: options.perAddressLimit(limits.perMinute.interaction),
    loginLimit: options.perAddressLimit(limits.perMinute.login),
  });
}

/** Why a registration is refused before oidc-provider reads it: too large, or no room for another client. */
async function registrationRefusal(
  request: FastifyRequest,
  host: ProviderHost,
  store: OAuthStore,
  limits: AuthorizationServerLimits,
): Promise<{ status: number; body: { error: string; error_description: string } } | undefined> {
  const length = Number(request.headers['content-length']);
  if (Number.isFinite(length) && length > limits.maxRegistrationBytes) {
    return {
      status: 413,
      body: { error: 'invalid_client_metadata', error_description: `the registration request must be at most ${limits.maxRegistrationBytes} bytes` },
    };
  }
  const { generation } = await host.current();
  if (!(await store.makeRoomForClient(generation))) {
    return {
      status: 503,
      body: { error: 'temporarily_unavailable', error_description: 'no more clients can be registered now; try again later' },
    };
  }
  return undefined;
}

/**
 * The answer past a per-address limit (429, with Retry-After and x-ratelimit-* already set): an HTML page where a
 * browser asked, an RFC 6749-shaped JSON error where a client did. Any other error is Fastify's usual answer.
 */
function rateLimitedAnswer(kind: 'page' | 'json') {
  return (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
    if (error.statusCode !== 429) return reply.send(error);
    if (kind === 'json') return reply.code(429).header('cache-control', 'no-store').send({ error: 'too_many_requests', error_description: error.message });
    return sendPage(reply, 429, messagePage('Too many requests', `${error.message}.`));
  };
}

function sendPage(reply: FastifyReply, status: number, html: string, headers: Record<string, string> = {}) {
  return reply.code(status).headers({ ...PAGE_HEADERS, ...headers }).send(html);
}

/**
 * Connectors reconnect without a scope; an authorization request without one asks for both memory scopes, and so
 * does one naming only spaces (`space:…`): it asks for the memories in them.
 */
function withDefaultScope(url: string): string {
  const parsed = new URL(url, 'http://localhost');
  const asked = parseScopes(parsed.searchParams.get('scope') ?? '');
  if (asked.length > 0 && !asked.every(isSpaceScope)) return url;
  parsed.searchParams.set('scope', [DEFAULT_SCOPE, ...asked].join(' '));
  return `${parsed.pathname}${parsed.search}`;
}

interface InteractionOptions {
  readonly host: ProviderHost;
  readonly users: UserStore;
  readonly throttle: LoginThrottle;
  readonly issuer: URL;
  readonly resource: string;
  readonly spacesOf: (subject: string) => Promise<readonly PersonSpace[]>;
  readonly pageLimit: onRequestHookHandler;
  readonly loginLimit: onRequestHookHandler;
}

type InteractionRoute = { Params: { uid: string }; Body: Record<string, string | string[] | undefined> };

/** Our own sign-in and consent pages, driven by oidc-provider's interaction API. */
async function interactionRoutes(app: FastifyInstance, options: InteractionOptions): Promise<void> {
  const { host, users, throttle, issuer } = options;
  // Bound to the interaction: a form can only be posted with the page's own token and interaction cookie. The key
  // comes from the state file, so any process sharing it accepts the form.
  const csrfFor = (state: AuthorizationServerState, uid: string) =>
    createHmac('sha256', derivedKey(state, 'sign-in form csrf')).update(uid).digest('base64url');
  const csrfValid = (state: AuthorizationServerState, uid: string, presented: unknown): boolean => {
    if (typeof presented !== 'string') return false;
    const expected = Buffer.from(csrfFor(state, uid));
    const given = Buffer.from(presented);
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  app.setErrorHandler(rateLimitedAnswer('page'));

  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 16 * 1024 }, (_request, body, done) => {
    done(null, parseQuery(body as string));
  });

  const send = (reply: FastifyReply, status: number, html: string) => sendPage(reply, status, html);

  // oidc-provider reads and writes its cookies on the raw request and response.
  const details = async (request: FastifyRequest, reply: FastifyReply) => {
    const { provider, state } = await host.current();
    forceIssuerOrigin(request.raw, issuer);
    try {
      const interaction = await provider.interactionDetails(request.raw, reply.raw);
      const client = await provider.Client.find(String(interaction.params.client_id));
      return { provider, state, interaction, client };
    } catch {
      return undefined;
    }
  };

  const clientView = (client: { clientName?: string | undefined; clientId: string } | undefined, redirectUri: unknown): ClientView => ({
    name: client?.clientName ?? client?.clientId ?? 'An application',
    redirectHost: typeof redirectUri === 'string' ? (URL.parse(redirectUri)?.host ?? redirectUri) : 'an unknown address',
    // A client identified by its metadata document is vouched for by the host serving that document.
    ...(isUrlClientId(client?.clientId) ? { publishedBy: new URL(client.clientId).host } : {}),
  });

  const expired = (reply: FastifyReply) =>
    send(
      reply,
      400,
      messagePage(
        'Sign-in expired',
        'This sign-in page has expired or was opened in another browser. Go back to the application and connect again.',
      ),
    );

  app.get<{ Params: { uid: string } }>(`${INTERACTION_PATH}/:uid`, { onRequest: options.pageLimit }, async (request, reply) => {
    const found = await details(request, reply);
    if (found === undefined || found.interaction.uid !== request.params.uid) return expired(reply);
    const { interaction, client, state } = found;
    const view = clientView(client, interaction.params.redirect_uri);
    const csrf = csrfFor(state, interaction.uid);
    if (interaction.prompt.name === 'login') {
      return send(reply, 200, loginPage({ action: `${INTERACTION_PATH}/${interaction.uid}/login`, csrf, client: view }));
    }
    return send(reply, 200, await consentFor(interaction, view, csrf));
  });

  /** The consent page: the memory scopes asked, and the spaces the client names or the person may choose among. */
  const consentFor = async (interaction: Interaction, client: ClientView, csrf: string, error?: string): Promise<string> => {
    const accountId = String(interaction.session?.accountId);
    const { provider } = await host.current();
    // The spaces this client was limited to before are ticked again.
    const earlier = interaction.grantId === undefined ? undefined : await provider.Grant.find(interaction.grantId);
    return consentPage({
      action: `${INTERACTION_PATH}/${interaction.uid}/consent`,
      csrf,
      client,
      userName: users.findById(accountId)?.name ?? 'unknown user',
      scopes: requestedScopes(interaction),
      spaces: consentSpaces(parseScopes(interaction.params.scope), await options.spacesOf(accountId), spaceScopesOf(parseScopes(earlier?.getResourceScope(options.resource)))),
      ...(error === undefined ? {} : { error }),
    });
  };

  app.post<InteractionRoute>(`${INTERACTION_PATH}/:uid/login`, { onRequest: options.loginLimit }, async (request, reply) => {
    const found = await details(request, reply);
    if (found === undefined || found.interaction.uid !== request.params.uid || found.interaction.prompt.name !== 'login') {
      return expired(reply);
    }
    const { provider, interaction, client, state } = found;
    const body = request.body ?? {};
    if (!csrfValid(state, interaction.uid, first(body.csrf))) {
      return send(reply, 403, messagePage('Request refused', 'The form was not sent from this sign-in page. Reload it and try again.'));
    }
    const username = first(body.username) ?? '';
    const password = first(body.password) ?? '';
    const view = clientView(client, interaction.params.redirect_uri);
    const action = `${INTERACTION_PATH}/${interaction.uid}/login`;
    const csrf = csrfFor(state, interaction.uid);
    const wait = throttle.retryAfter(username, request.ip);
    if (wait > 0) {
      reply.header('retry-after', String(wait));
      const minutes = Math.ceil(wait / 60);
      return send(
        reply,
        429,
        loginPage({
          action,
          csrf,
          client: view,
          username,
          error: `Too many failed sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
        }),
      );
    }
    const user = await users.authenticate(username, password);
    if (user === undefined) {
      throttle.recordFailure(username, request.ip);
      return send(reply, 401, loginPage({ action, csrf, client: view, username, error: 'Wrong user name or password.' }));
    }
    throttle.recordSuccess(username, request.ip);
    const redirectTo = await provider.interactionResult(request.raw, reply.raw, { login: { accountId: user.id } }, {
      mergeWithLastSubmission: false,
    });
    return reply.redirect(redirectTo, 303);
  });

  app.post<InteractionRoute>(`${INTERACTION_PATH}/:uid/consent`, { onRequest: options.pageLimit }, async (request, reply) => {
    const found = await details(request, reply);
    if (found === undefined || found.interaction.uid !== request.params.uid || found.interaction.prompt.name !== 'consent') {
      return expired(reply);
    }
    const { provider, interaction, state } = found;
    const body = request.body ?? {};
    if (!csrfValid(state, interaction.uid, first(body.csrf))) {
      return send(reply, 403, messagePage('Request refused', 'The form was not sent from this page. Reload it and try again.'));
    }
    if (first(body.decision) !== 'allow') {
      const redirectTo = await provider.interactionResult(
        request.raw,
        reply.raw,
        { error: 'access_denied', error_description: 'the user denied access' },
        { mergeWithLastSubmission: false },
      );
      return reply.redirect(redirectTo, 303);
    }
    const accountId = String(interaction.session?.accountId);
    const clientId = String(interaction.params.client_id);
    const asked = parseScopes(interaction.params.scope);
    const spaces = consentSpaces(asked, await options.spacesOf(accountId));
    const chosen = chosenSpaces(spaces, body);
    if (typeof chosen === 'string') {
      if (spaces.kind === 'named') {
        // Not the person's to allow: the client is told, as for a scope this server does not grant.
        const redirectTo = await provider.interactionResult(request.raw, reply.raw, { error: 'invalid_scope', error_description: chosen }, { mergeWithLastSubmission: false });
        return reply.redirect(redirectTo, 303);
      }
      return send(reply, 400, await consentFor(interaction, clientView(found.client, interaction.params.redirect_uri), csrfFor(state, interaction.uid), chosen));
    }
    const existing = interaction.grantId === undefined ? undefined : await provider.Grant.find(interaction.grantId);
    const grant = grantFor(provider, existing, { accountId, clientId, resource: options.resource, spaces: chosen });
    const missing = interaction.prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope !== undefined) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims !== undefined) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.filter((scope) => !isSpaceScope(scope)).join(' '));
    }
    if (chosen.length > 0) grant.addResourceScope(options.resource, chosen.join(' '));
    const grantId = await grant.save();
    // A token's scope is what the grant and the request share: the request now asks for the spaces chosen.
    interaction.params.scope = [...asked.filter((scope) => !isSpaceScope(scope)), ...chosen].join(' ');
    await interaction.save(interaction.exp - Math.floor(Date.now() / 1000));
    const redirectTo = await provider.interactionResult(request.raw, reply.raw, { consent: { grantId } }, {
      mergeWithLastSubmission: true,
    });
    return reply.redirect(redirectTo, 303);
  });
}

/** The memory scopes to consent to: those not granted yet, else those asked (spaces are shown apart). */
function requestedScopes(interaction: Interaction): string[] {
  const missing = (interaction.prompt.details as { missingResourceScopes?: Record<string, string[]> }).missingResourceScopes ?? {};
  const memory = (scopes: Iterable<string>) => [...new Set(scopes)].filter((scope) => (SCOPES as readonly string[]).includes(scope));
  const notGranted = memory(Object.values(missing).flat());
  if (notGranted.length > 0) return notGranted;
  const asked = memory(parseScopes(interaction.params.scope));
  return asked.length > 0 ? asked : DEFAULT_SCOPE.split(' ');
}

/**
 * What the consent page says about spaces: the ones a client names (and those among them that are not the
 * person's), or, when it names none, every space of the person's to choose from.
 */
function consentSpaces(asked: readonly string[], mine: readonly PersonSpace[], ticked: readonly string[] = []): ConsentSpaces {
  const named = spaceScopesOf(asked);
  if (named.length === 0) return { kind: 'choice', spaces: mine, ticked };
  const byScope = new Map(mine.map((space) => [space.scope, space]));
  return {
    kind: 'named',
    spaces: named.flatMap((scope) => byScope.get(scope) ?? []),
    notYours: named.filter((scope) => !byScope.has(scope)),
  };
}

/**
 * The `space:` scopes the token gets ([] = every space), or why the form cannot be taken: a client naming a space
 * that is not the person's, or "only these spaces" with none ticked. A ticked space limits the token even if
 * "all" was left selected: ticking is the narrower wish.
 */
function chosenSpaces(spaces: ConsentSpaces, body: Record<string, string | string[] | undefined>): string[] | string {
  if (spaces.kind === 'named') {
    if (spaces.notYours.length > 0) return `the application asks for spaces you are not a member of (${spaces.notYours.join(', ')})`;
    return spaces.spaces.map((space) => space.scope);
  }
  const ticked = new Set([body.space ?? []].flat());
  const chosen = spaces.spaces.filter((space) => ticked.has(space.scope)).map((space) => space.scope);
  if (chosen.length > 0) return chosen;
  if (first(body.spaces) === 'some') return 'Tick at least one space, or allow all your spaces.';
  return [];
}

/**
 * The grant the consent is recorded in. An earlier grant is extended only when it was limited to the same spaces;
 * otherwise a new one takes its memory scopes and the new choice, and the earlier one is left as it is: refresh
 * tokens it issued keep exactly their spaces (a token's scope is what its grant and it share, so taking a space
 * out of their grant would turn a limited token into one reaching every space).
 */
function grantFor(
  provider: Provider,
  existing: Grant | undefined,
  parts: { accountId: string; clientId: string; resource: string; spaces: readonly string[] },
): Grant {
  const before = spaceScopesOf(parseScopes(existing?.getResourceScope(parts.resource)));
  if (existing !== undefined && before.length === parts.spaces.length && before.every((scope) => parts.spaces.includes(scope))) return existing;
  const grant = new provider.Grant({ accountId: parts.accountId, clientId: parts.clientId });
  if (existing === undefined) return grant;
  grant.addOIDCScope(existing.getOIDCScope());
  grant.addOIDCClaims(existing.getOIDCClaims());
  grant.addResourceScope(parts.resource, parseScopes(existing.getResourceScope(parts.resource)).filter((scope) => !isSpaceScope(scope)).join(' '));
  return grant;
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
