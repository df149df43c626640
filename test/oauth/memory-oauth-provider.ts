import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

/**
 * The MCP SDK's OAuthClientProvider as a desktop client implements it, kept in memory: it stores what the
 * SDK hands it and records where it was sent to sign in.
 */
export class MemoryOAuthProvider implements OAuthClientProvider {
  readonly redirectUrl: string;
  readonly clientMetadata: OAuthClientMetadata;
  /** When set (and the server supports it), the client is identified by this metadata document's URL. */
  readonly clientMetadataUrl?: string;
  authorizationUrl: URL | undefined;
  lastState: string | undefined;
  readonly invalidations: string[] = [];
  #client: OAuthClientInformationMixed | undefined;
  #tokens: OAuthTokens | undefined;
  #verifier: string | undefined;

  #discovery: unknown;

  constructor(redirectUrl: string, name = 'memory-service test client', clientMetadataUrl?: string, scope?: string) {
    this.redirectUrl = redirectUrl;
    if (clientMetadataUrl !== undefined) this.clientMetadataUrl = clientMetadataUrl;
    this.clientMetadata = {
      client_name: name,
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(scope === undefined ? {} : { scope }),
    };
  }

  state(): string {
    this.lastState = randomBytes(16).toString('base64url');
    return this.lastState;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.#client;
  }

  saveClientInformation(information: OAuthClientInformationMixed): void {
    this.#client = information;
  }

  tokens(): OAuthTokens | undefined {
    return this.#tokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.#tokens = tokens;
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.authorizationUrl = authorizationUrl;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.#verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.#verifier === undefined) throw new Error('no code verifier saved');
    return this.#verifier;
  }

  /** SDK 2.x binds the code exchange to the authorization server it discovered before the redirect. */
  saveDiscoveryState(state: unknown): void {
    this.#discovery = state;
  }

  discoveryState(): never {
    return this.#discovery as never;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    this.invalidations.push(scope);
    if (scope === 'all' || scope === 'client') this.#client = undefined;
    if (scope === 'all' || scope === 'tokens') this.#tokens = undefined;
    if (scope === 'all' || scope === 'verifier') this.#verifier = undefined;
    if (scope === 'all' || scope === 'discovery') this.#discovery = undefined;
  }
}
