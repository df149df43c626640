import Provider, { errors, interactionPolicy, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { Logger } from '../../logger.js';
import { isSpaceScope, parseScopes, SCOPES, SPACE_SCOPE_PREFIX, spaceScopesOf } from '../scopes.js';
import { CLIENT_POLICY_HOOK, validateClientMetadata } from './client-metadata.js';
import { INTERACTION_PATH, ROUTES, SESSION_COOKIE } from './endpoints.js';
import type { AuthorizationServerLimits } from './limits.js';
import type { OAuthStore } from './oauth-store.js';
import { messagePage, PAGE_HEADERS } from './pages.js';
import { derivedKey, SIGNING_ALG, type AuthorizationServerState, type StateFile } from './state-file.js';
import { signInsValidFrom, type UserStore } from './user-store.js';
import { loadExistingGrant, WEB_CLIENT_ID, webClientMetadata, webClientSecret } from './web-client.js';

export interface AuthorizationServerSettings {
  /** BaseUrl: the issuer, and the origin of every endpoint. */
  readonly issuer: string;
  /** `<BaseUrl>/mcp`: the only resource indicator accepted (and the default one). */
  readonly resource: string;
  /** The `aud` of issued access tokens (OAuthAudience). */
  readonly audience: string;
  readonly limits: AuthorizationServerLimits;
  /** Where clients, grants, tokens, sessions and interactions are kept (the database). */
  readonly store: OAuthStore;
  /** Fetches Client ID Metadata Documents (see client-metadata-fetch.ts). */
  readonly clientMetadataFetch: typeof fetch;
  /** The web page's callback; the page is then a static first-party client (web-client.ts). */
  readonly webRedirectUri?: string | undefined;
}

const ACCESS_TOKEN_TTL = 60 * 60;
/** Sliding: every rotation starts a new 30 days, so a connector in use never has to log in again. */
const REFRESH_TOKEN_TTL = 30 * 24 * 60 * 60;
/** The absolute limit of one login: the grant every refresh token of a family hangs on. */
const GRANT_TTL = 365 * 24 * 60 * 60;
/** A metadata document is fetched again after its Cache-Control/Expires lifetime, kept within these bounds. */
const CLIENT_METADATA_CACHE_SECONDS = { min: 60, max: 24 * 60 * 60 };

/**
 * oidc-provider for one state-file generation: its signing key is the state file's key, so access tokens are
 * the same RFC 9068 JWTs that `token issue` makes and the resource server verifies.
 */
export function createProvider(settings: AuthorizationServerSettings, state: AuthorizationServerState, users: UserStore, logger: Logger): Provider {
  const configuration: Configuration = {
    adapter: settings.store.adapterFactory(state.generation),
    clients: settings.webRedirectUri === undefined ? [] : [webClientMetadata(webClientSecret(state), settings.webRedirectUri)],
    loadExistingGrant: (ctx) => loadExistingGrant(ctx, settings.resource),
    jwks: { keys: [{ ...state.signingKey.privateJwk, kid: state.signingKey.kid, alg: SIGNING_ALG, use: 'sig' }] },
    routes: ROUTES,
    responseTypes: ['code'],
    scopes: [...SCOPES],
    claims: { openid: ['sub'] },
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      // RFC 7591's default: a client that names no method gets a secret (MCP clients register with `none`).
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: SIGNING_ALG,
    },
    enabledJWA: { idTokenSigningAlgValues: [SIGNING_ALG] },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true, initialAccessToken: false, issueRegistrationAccessToken: false },
      // A client may revoke only its own tokens.
      revocation: { enabled: true, allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      // Bearer tokens only: the resource server does not check DPoP proofs.
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      // A client_id that is an https URL names its own metadata document (MCP's preferred way to identify a client).
      clientIdMetadataDocument: { enabled: true, ack: 'draft-02', cacheDuration: CLIENT_METADATA_CACHE_SECONDS },
      resourceIndicators: {
        enabled: true,
        // Connectors that send no `resource` get ours; the one they were granted is reused at the token endpoint.
        defaultResource: () => settings.resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator) => {
          if (indicator !== settings.resource) {
            throw new errors.InvalidTarget(`unknown resource; this server only issues tokens for ${settings.resource}`);
          }
          return {
            scope: [...SCOPES, ...spaceScopesOfRequest(ctx, indicator)].join(' '),
            audience: settings.audience,
            accessTokenTTL: ACCESS_TOKEN_TTL,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: SIGNING_ALG } },
          };
        },
      },
    },
    // Refresh tokens without `offline_access`: connectors rarely ask for it and must not log in every hour.
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    // A sign-in session is short; the tokens it led to live on.
    expiresWithSession: () => false,
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL,
      AuthorizationCode: 120,
      RefreshToken: REFRESH_TOKEN_TTL,
      Grant: GRANT_TTL,
      Session: settings.limits.sessionTtlSeconds,
      Interaction: settings.limits.interactionTtlSeconds,
      IdToken: ACCESS_TOKEN_TTL,
    },
    extraClientMetadata: {
      properties: [CLIENT_POLICY_HOOK],
      // The web page's callback is BaseUrl's own, whatever its scheme; every other client is held to the rules.
      validator: (_ctx, key, _value, metadata) => (metadata.client_id === WEB_CLIENT_ID ? undefined : validateClientMetadata(key, metadata)),
    },
    fetch: settings.clientMetadataFetch,
    findAccount: (ctx, id, token) => {
      const user = users.findById(id);
      if (user === undefined) return undefined;
      // A password change or a revocation ends every earlier login: refresh tokens and sessions from before it are refused.
      const authTime = (token as { authTime?: number } | undefined)?.authTime ?? sessionAuthTime(ctx);
      if (authTime !== undefined && authTime * 1000 < signInsValidFrom(user) - 1000) return undefined;
      return { accountId: user.id, claims: () => ({ sub: user.id }) };
    },
    interactions: { policy: signInPolicy(), url: (_ctx, interaction) => `${INTERACTION_PATH}/${interaction.uid}` },
    // The same keys in every process sharing the state file: a sign-in started on one finishes on another.
    cookies: { keys: [derivedKey(state, 'cookie signing').toString('base64url')], names: { session: SESSION_COOKIE } },
    clientBasedCORS: () => true,
    renderError: (ctx, out, error) => {
      ctx.status = ctx.status >= 400 ? ctx.status : 400;
      // A client checking its stored registration before opening a browser (mcp-remote asks for JSON) is told
      // invalid_client in the RFC 6749 shape, and registers again; a browser gets the page.
      if (ctx.accepts('html', 'json') === 'json') {
        ctx.set('cache-control', 'no-store');
        ctx.body = { error: out.error, ...(out.error_description === undefined ? {} : { error_description: out.error_description }) };
        return;
      }
      ctx.set(PAGE_HEADERS);
      ctx.body = messagePage('Sign-in failed', `${errorText(out, error)}. Go back to the application and connect again.`);
    },
  };
  const provider = new Provider(settings.issuer, configuration);
  // Endpoint URLs always derive from BaseUrl (see forceIssuerOrigin), never from a client-supplied Host.
  provider.proxy = true;
  provider.on('server_error', (_ctx: unknown, error: Error) => {
    logger.error({ err: { message: error.message, name: error.name } }, 'authorization server error');
  });
  return provider;
}

/**
 * oidc-provider's prompts, with one more reason to ask for the password: a browser session whose account
 * findAccount no longer accepts (the user was removed, changed the password or had every sign-in revoked).
 * Without it the session counts as signed in but has no account, and the consent checks fail with a 500.
 */
function signInPolicy(): interactionPolicy.DefaultPolicy {
  const policy = interactionPolicy.base();
  policy.get('login')!.checks.add(
    new interactionPolicy.Check('account_gone', 'End-User authentication is required', (ctx) =>
      ctx.oidc.session?.accountId !== undefined && ctx.oidc.account === undefined ? interactionPolicy.Check.REQUEST_PROMPT : interactionPolicy.Check.NO_NEED_TO_PROMPT,
    ),
  );
  return policy;
}

/**
 * The `space:` scopes a request may carry besides the memory scopes: those it asks for (an authorization request,
 * a refresh naming its scope) and those its grant holds (the code or refresh token being exchanged carries the
 * spaces the person chose on the consent page). A malformed one is refused: dropping it, as an unknown scope is
 * dropped, would issue a token reaching every space instead of the one meant; so is a refresh narrowing its scope
 * to no space at all.
 */
function spaceScopesOfRequest(ctx: KoaContextWithOIDC, indicator: string): string[] {
  const asked = parseScopes(ctx.oidc.params?.scope);
  const malformed = asked.find((scope) => scope.startsWith(SPACE_SCOPE_PREFIX) && !isSpaceScope(scope));
  if (malformed !== undefined) {
    throw new errors.InvalidScope('a space scope is space:personal or a space\'s id (space: and 16 to 40 of a-z, 0-9), never its name', malformed);
  }
  // A refresh naming a narrower scope gets what it names: without any of its token's spaces, every space.
  const held = spaceScopesOf(parseScopes(ctx.oidc.entities.RefreshToken?.scope));
  if (held.length > 0 && asked.length > 0 && spaceScopesOf(asked).length === 0) {
    throw new errors.InvalidScope('this refresh token is limited to spaces: name one or more of them in scope, or leave scope out', held.join(' '));
  }
  return spaceScopesOf([...asked, ...parseScopes(ctx.oidc.entities.Grant?.getResourceScope(indicator))]);
}

/** What the error page says: a metadata document's failure is told in full, so its author can fix it. */
function errorText(out: { error: string; error_description?: string | undefined }, error: Error): string {
  const description = out.error_description ?? out.error;
  const detail = (error as { error_detail?: unknown }).error_detail;
  return description.startsWith('client_id metadata document') && typeof detail === 'string' ? `${description}: ${detail}` : description;
}

function sessionAuthTime(ctx: KoaContextWithOIDC | undefined): number | undefined {
  try {
    return ctx?.oidc?.session?.authTime();
  } catch {
    return undefined;
  }
}

/** Rebuilds the provider whenever the state file starts a new generation (deleted or replaced: new keys). */
export class ProviderHost {
  readonly #settings: AuthorizationServerSettings;
  readonly #stateFile: StateFile;
  readonly #users: UserStore;
  readonly #logger: Logger;
  #current: ProviderGeneration | undefined;

  constructor(settings: AuthorizationServerSettings, stateFile: StateFile, users: UserStore, logger: Logger) {
    this.#settings = settings;
    this.#stateFile = stateFile;
    this.#users = users;
    this.#logger = logger;
  }

  async current(): Promise<ProviderGeneration> {
    const state = await this.#stateFile.current();
    if (this.#current?.generation !== state.generation) {
      const provider = createProvider(this.#settings, state, this.#users, this.#logger);
      this.#current = { generation: state.generation, state, provider, callback: provider.callback() };
      // A new generation: what earlier ones stored is swept away (it is already invisible).
      void this.#settings.store.sweep(state.generation, true);
    }
    return this.#current;
  }
}

export interface ProviderGeneration {
  readonly generation: string;
  readonly state: AuthorizationServerState;
  readonly provider: Provider;
  readonly callback: ReturnType<Provider['callback']>;
}
