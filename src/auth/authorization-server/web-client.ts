import { hkdfSync } from 'node:crypto';
import type { ClientMetadata, Grant, KoaContextWithOIDC } from 'oidc-provider';
import { SCOPES } from '../scopes.js';
import type { AuthorizationServerState } from './state-file.js';

/**
 * The web page (`{BaseUrl}/`) as a client of the built-in authorization server: a static, confidential,
 * first-party client, known without registration. Its secret is derived from the state file's secret material,
 * so replicas sharing the file agree on it and a new generation of the file (deleted or replaced) changes it:
 * the page's sessions, keyed by it, end with everyone's tokens.
 */
export const WEB_CLIENT_ID = 'memory-service-web';

/** HKDF of the signing key's private scalar, salted with the generation. */
export function webClientSecret(state: AuthorizationServerState): string {
  const material = Buffer.from(String(state.signingKey.privateJwk.d), 'base64url');
  return Buffer.from(hkdfSync('sha256', material, state.generation, 'memory-service web client secret', 32)).toString('base64url');
}

export function webClientMetadata(secret: string, redirectUri: string): ClientMetadata {
  return {
    client_id: WEB_CLIENT_ID,
    client_secret: secret,
    client_name: 'the memory-service web page',
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_post',
  };
}

/**
 * oidc-provider's `loadExistingGrant`, extended: the grant of an earlier consent as usual, and for the web page
 * a grant made on the spot, because a person reading their own memories on this service's own page has nothing
 * to consent to. Every other client still gets the consent page.
 */
export async function loadExistingGrant(ctx: KoaContextWithOIDC, resource: string): Promise<Grant | undefined> {
  const { oidc } = ctx;
  const clientId = oidc.client?.clientId;
  const grantId = oidc.result?.consent?.grantId ?? (clientId === undefined ? undefined : oidc.session?.grantIdFor(clientId));
  if (grantId !== undefined) return oidc.provider.Grant.find(grantId);
  const accountId = oidc.account?.accountId;
  if (clientId !== WEB_CLIENT_ID || accountId === undefined) return undefined;
  const grant = new oidc.provider.Grant({ clientId, accountId });
  // The provider lists the memory scopes among its own (scopes), so they are granted both ways, as consent does.
  grant.addOIDCScope(['openid', ...SCOPES].join(' '));
  grant.addResourceScope(resource, SCOPES.join(' '));
  await grant.save();
  return grant;
}
