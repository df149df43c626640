import {
  allowInsecureRequests,
  AuthorizationResponseError,
  authorizationCodeGrant,
  buildAuthorizationUrl,
  calculatePKCECodeChallenge,
  customFetch,
  discovery,
  randomPKCECodeVerifier,
  randomState,
  ResponseBodyError,
  type Configuration,
  type CustomFetch,
} from 'openid-client';
import { DEFAULT_SCOPE } from '../auth/scopes.js';
import { TokenError, type AuthInfo, type TokenVerifier } from '../auth/resource-server/token-verifier.js';

/** The client the page signs in as, and how it reaches the authorization server. */
export interface SignInClient {
  readonly issuer: string;
  /** Read at every sign-in: the built-in server's secret follows its state file. */
  credentials(): Promise<{ readonly clientId: string; readonly clientSecret: string }>;
  /** Instead of fetch (the built-in server is asked in-process, wherever BaseUrl points). */
  readonly fetch?: CustomFetch | undefined;
}

/** What the page keeps (in a short-lived cookie) between sending the browser away and its return. */
export interface PendingSignIn {
  readonly state: string;
  readonly codeVerifier: string;
  /** The page to show afterwards (a path of ours). */
  readonly next: string;
}

/** Why a sign-in failed: `description` is for the person, safe to show (no token, no secret). */
export class SignInError extends Error {
  readonly status: number;
  readonly description: string;

  constructor(status: number, description: string, options: { cause?: unknown } = {}) {
    super(description, options);
    this.name = 'SignInError';
    this.status = status;
    this.description = description;
  }
}

export interface RelyingPartyOptions {
  readonly client: SignInClient;
  /** `{BaseUrl}/auth/callback`. */
  readonly redirectUri: string;
  /** `{BaseUrl}/mcp`: the token asked for is for the tools' own resource. */
  readonly resource: string;
  /** The verifier of /mcp: the page's subject is what the tools would see for the same token. */
  readonly verifier: TokenVerifier;
  readonly timeoutSeconds?: number;
}

/** Metadata is discovered again after this long (or after a failure). */
const DISCOVERY_TTL_MS = 10 * 60 * 1000;
const SCOPE = `openid ${DEFAULT_SCOPE}`;

/**
 * The page as an OpenID Connect relying party (openid-client): authorization code with PKCE (S256), state, a
 * `resource` of `{BaseUrl}/mcp`, a confidential client. The access token it gets is verified by the same verifier
 * as /mcp, and its subject becomes the session's: the page and the tools always agree on whose memories these are.
 * `prompt=login` asks for the password every time, so signing out of the page leaves nobody signed in to it.
 */
export class RelyingParty {
  readonly #options: RelyingPartyOptions;
  #configuration: { key: string; at: number; value: Promise<Configuration> } | undefined;

  constructor(options: RelyingPartyOptions) {
    this.#options = options;
  }

  async begin(next: string): Promise<{ url: URL; pending: PendingSignIn }> {
    const configuration = await this.#configure();
    const codeVerifier = randomPKCECodeVerifier();
    const state = randomState();
    const url = buildAuthorizationUrl(configuration, {
      redirect_uri: this.#options.redirectUri,
      scope: SCOPE,
      resource: this.#options.resource,
      code_challenge: await calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      prompt: 'login',
    });
    return { url, pending: { state, codeVerifier, next } };
  }

  /** Exchanges the callback's code and verifies the access token; the signed-in person, or SignInError. */
  async complete(query: string, pending: PendingSignIn): Promise<AuthInfo> {
    const configuration = await this.#configure();
    // The callback as registered (BaseUrl's), whatever Host the request came with; its query is the answer.
    const callback = new URL(this.#options.redirectUri);
    callback.search = query;
    let accessToken: string;
    try {
      const tokens = await authorizationCodeGrant(
        configuration,
        callback,
        { pkceCodeVerifier: pending.codeVerifier, expectedState: pending.state },
        { resource: this.#options.resource },
      );
      accessToken = tokens.access_token;
    } catch (error) {
      if (error instanceof AuthorizationResponseError) {
        // The person cancelled, or the server refused (access_denied, login_required, ...).
        throw new SignInError(403, `the authorization server answered ${error.error}${error.error_description === undefined ? '' : `: ${error.error_description}`}`, { cause: error });
      }
      this.#configuration = undefined;
      if (error instanceof ResponseBodyError && error.error === 'invalid_client') {
        throw new SignInError(502, "the authorization server refused this service's client (invalid_client); its operator should check the page's client id and secret", { cause: error });
      }
      throw new SignInError(502, 'the answer of the authorization server could not be used; try again', { cause: error });
    }
    try {
      return await this.#options.verifier.verify(accessToken);
    } catch (error) {
      if (error instanceof TokenError) throw new SignInError(403, `the access token was not accepted: ${error.description}`, { cause: error });
      throw error;
    }
  }

  async #configure(): Promise<Configuration> {
    const { client } = this.#options;
    const { clientId, clientSecret } = await client.credentials();
    const key = `${clientId}\u0000${clientSecret}`;
    const cached = this.#configuration;
    if (cached !== undefined && cached.key === key && Date.now() - cached.at < DISCOVERY_TTL_MS) return cached.value;
    const issuer = new URL(client.issuer);
    const value = discovery(issuer, clientId, clientSecret, undefined, {
      ...(client.fetch === undefined ? {} : { [customFetch]: client.fetch }),
      ...(issuer.protocol === 'http:' ? { execute: [allowInsecureRequests] } : {}),
      timeout: this.#options.timeoutSeconds ?? 10,
    });
    this.#configuration = { key, at: Date.now(), value };
    try {
      return await value;
    } catch (error) {
      if (this.#configuration?.value === value) this.#configuration = undefined;
      throw new SignInError(502, `the authorization server ${client.issuer} could not be reached; try again shortly`, { cause: error });
    }
  }
}
