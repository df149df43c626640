import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { parse as parseQuery } from 'node:querystring';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Logger } from '../../logger.js';
import { DEFAULT_SCOPE } from '../scopes.js';
import type { StateFile } from './state-file.js';
import { LoginThrottle } from './login-throttle.js';
import { consentPage, loginPage, messagePage, PAGE_HEADERS, type ClientView } from './pages.js';
import { forceIssuerOrigin, INTERACTION_PATH, ROUTES } from './endpoints.js';
import type { ProviderHost } from './provider.js';
import type { UserStore } from './user-store.js';

export interface AuthorizationServerOptions {
  readonly issuer: string;
  readonly resource: string;
  readonly audience: string;
  readonly stateFile: StateFile;
  readonly users: UserStore;
  readonly logger: Logger;
  readonly throttle?: LoginThrottle;
  /**
   * Makes a per-client-address request limit on `app` (an onRequest hook with counters of its own), for the
   * endpoints anyone can call unauthenticated that write state or check passwords: registration and sign-in.
   */
  readonly perAddressLimit: (app: FastifyInstance) => onRequestAsyncHookHandler;
  /** The web page's sign-in callback, when the page is on (it is then a first-party client). */
  readonly webRedirectUri?: string | undefined;
}

/** The paths oidc-provider answers itself; they are handed the raw request untouched. */
const PROVIDER_PATHS = [
  ROUTES.authorization,
  `${ROUTES.authorization}/:uid`,
  ROUTES.token,
  ROUTES.registration,
  ROUTES.revocation,
  ROUTES.jwks,
  '/.well-known/openid-configuration',
];

/** Endpoints a browser-based public client calls from script (discovery documents are covered by prefix). */
export const AUTHORIZATION_SERVER_CORS_PATHS: readonly string[] = [ROUTES.token, ROUTES.registration, ROUTES.revocation, ROUTES.jwks];

/** The built-in OAuth 2.1 authorization server (issuer = BaseUrl), mounted only when it is the configured one. */
export async function authorizationServerRoutes(app: FastifyInstance, options: AuthorizationServerOptions): Promise<void> {
  const issuer = new URL(options.issuer);
  const cookieKeys = [randomBytes(32).toString('base64url')];
  // Loaded only when mounted: oidc-provider announces itself on import, which other commands need not hear.
  const { ProviderHost } = await import('./provider.js');
  const host = new ProviderHost(
    { issuer: options.issuer, resource: options.resource, audience: options.audience, cookieKeys, webRedirectUri: options.webRedirectUri },
    options.stateFile,
    options.users,
    options.logger,
  );

  await app.register(async (scope) => {
    // oidc-provider reads request bodies itself: leave the stream unread.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

    const handToProvider = async (request: FastifyRequest, reply: FastifyReply, url = request.raw.url ?? '/') => {
      const { callback } = await host.current();
      forceIssuerOrigin(request.raw, issuer);
      request.raw.url = url;
      reply.hijack();
      await callback(request.raw, reply.raw);
    };

    // Registrations are written to the state file: limit them per address like logins.
    const perAddress = options.perAddressLimit(scope);
    for (const path of PROVIDER_PATHS) {
      scope.route({
        method: ['GET', 'POST'],
        url: path,
        ...(path === ROUTES.registration ? { onRequest: perAddress } : {}),
        handler: (request, reply) =>
          handToProvider(request, reply, path === ROUTES.authorization ? withDefaultScope(request.raw.url ?? '/') : undefined),
      });
    }
    // RFC 8414 metadata is the same document as OpenID discovery (the issuer has no path).
    scope.get('/.well-known/oauth-authorization-server', (request, reply) =>
      handToProvider(request, reply, '/.well-known/openid-configuration'),
    );
  });

  await app.register(interactionRoutes, {
    host,
    users: options.users,
    throttle: options.throttle ?? new LoginThrottle(),
    issuer,
    perAddressLimit: options.perAddressLimit,
  });
}

/** Connectors reconnect without a scope; an authorization request without one asks for both. */
function withDefaultScope(url: string): string {
  const parsed = new URL(url, 'http://localhost');
  if ((parsed.searchParams.get('scope') ?? '').trim() !== '') return url;
  parsed.searchParams.set('scope', DEFAULT_SCOPE);
  return `${parsed.pathname}${parsed.search}`;
}

interface InteractionOptions {
  readonly host: ProviderHost;
  readonly users: UserStore;
  readonly throttle: LoginThrottle;
  readonly issuer: URL;
  readonly perAddressLimit: AuthorizationServerOptions['perAddressLimit'];
}

type InteractionRoute = { Params: { uid: string }; Body: Record<string, string | string[] | undefined> };

/** Our own sign-in and consent pages, driven by oidc-provider's interaction API. */
async function interactionRoutes(app: FastifyInstance, options: InteractionOptions): Promise<void> {
  const { host, users, throttle, issuer } = options;
  // Bound to the interaction: a form can only be posted with the page's own token and interaction cookie.
  const csrfKey = randomBytes(32);
  const csrfFor = (uid: string) => createHmac('sha256', csrfKey).update(uid).digest('base64url');
  const csrfValid = (uid: string, presented: unknown): boolean => {
    if (typeof presented !== 'string') return false;
    const expected = Buffer.from(csrfFor(uid));
    const given = Buffer.from(presented);
    return given.length === expected.length && timingSafeEqual(given, expected);
  };

  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 16 * 1024 }, (_request, body, done) => {
    done(null, parseQuery(body as string));
  });

  const send = (reply: FastifyReply, status: number, html: string) => reply.code(status).headers(PAGE_HEADERS).send(html);

  // oidc-provider reads and writes its cookies on the raw request and response.
  const details = async (request: FastifyRequest, reply: FastifyReply) => {
    const { provider } = await host.current();
    forceIssuerOrigin(request.raw, issuer);
    try {
      const interaction = await provider.interactionDetails(request.raw, reply.raw);
      const client = await provider.Client.find(String(interaction.params.client_id));
      return { provider, interaction, client };
    } catch {
      return undefined;
    }
  };

  const clientView = (client: { clientName?: string | undefined; clientId: string } | undefined, redirectUri: unknown): ClientView => ({
    name: client?.clientName ?? client?.clientId ?? 'An application',
    redirectHost: typeof redirectUri === 'string' ? (URL.parse(redirectUri)?.host ?? redirectUri) : 'an unknown address',
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

  app.get<{ Params: { uid: string } }>(`${INTERACTION_PATH}/:uid`, async (request, reply) => {
    const found = await details(request, reply);
    if (found === undefined || found.interaction.uid !== request.params.uid) return expired(reply);
    const { interaction, client } = found;
    const view = clientView(client, interaction.params.redirect_uri);
    const csrf = csrfFor(interaction.uid);
    if (interaction.prompt.name === 'login') {
      return send(reply, 200, loginPage({ action: `${INTERACTION_PATH}/${interaction.uid}/login`, csrf, client: view }));
    }
    const user = users.findById(String(interaction.session?.accountId));
    return send(
      reply,
      200,
      consentPage({
        action: `${INTERACTION_PATH}/${interaction.uid}/consent`,
        csrf,
        client: view,
        userName: user?.name ?? 'unknown user',
        scopes: requestedScopes(interaction.prompt.details),
      }),
    );
  });

  const perAddress = options.perAddressLimit(app);
  app.post<InteractionRoute>(`${INTERACTION_PATH}/:uid/login`, { onRequest: perAddress }, async (request, reply) => {
    const found = await details(request, reply);
    if (found === undefined || found.interaction.uid !== request.params.uid || found.interaction.prompt.name !== 'login') {
      return expired(reply);
    }
    const { provider, interaction, client } = found;
    const body = request.body ?? {};
    if (!csrfValid(interaction.uid, first(body.csrf))) {
      return send(reply, 403, messagePage('Request refused', 'The form was not sent from this sign-in page. Reload it and try again.'));
    }
    const username = first(body.username) ?? '';
    const password = first(body.password) ?? '';
    const view = clientView(client, interaction.params.redirect_uri);
    const action = `${INTERACTION_PATH}/${interaction.uid}/login`;
    const csrf = csrfFor(interaction.uid);
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

  app.post<InteractionRoute>(`${INTERACTION_PATH}/:uid/consent`, async (request, reply) => {
    const found = await details(request, reply);
    if (found === undefined || found.interaction.uid !== request.params.uid || found.interaction.prompt.name !== 'consent') {
      return expired(reply);
    }
    const { provider, interaction } = found;
    const body = request.body ?? {};
    if (!csrfValid(interaction.uid, first(body.csrf))) {
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
    const grant =
      (interaction.grantId === undefined ? undefined : await provider.Grant.find(interaction.grantId)) ??
      new provider.Grant({ accountId, clientId });
    const missing = interaction.prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope !== undefined) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims !== undefined) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    const grantId = await grant.save();
    const redirectTo = await provider.interactionResult(request.raw, reply.raw, { consent: { grantId } }, {
      mergeWithLastSubmission: true,
    });
    return reply.redirect(redirectTo, 303);
  });
}

function requestedScopes(details: unknown): string[] {
  const missing = (details as { missingResourceScopes?: Record<string, string[]> }).missingResourceScopes ?? {};
  const scopes = new Set(Object.values(missing).flat());
  return scopes.size === 0 ? DEFAULT_SCOPE.split(' ') : [...scopes];
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
