import { hkdfSync } from 'node:crypto';
import type { ClientMetadata, Grant, KoaContextWithOIDC } from 'oidc-provider';
import { parseScopes, SCOPES, spaceScopesOf } from '../scopes.js';
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
 * oidc-provider's `loadExistingGrant`, extended: the grant of an earlier consent as usual (with the spaces it was
 * limited to), and for the web page a grant made on the spot, because a person reading their own memories on this
 * service's own page has nothing to consent to. Every other client still gets the consent page.
 */
export async function loadExistingGrant(ctx: KoaContextWithOIDC, resource: string): Promise<Grant | undefined> {
  const { oidc } = ctx;
  const clientId = oidc.client?.clientId;
  const grantId = oidc.result?.consent?.grantId ?? (clientId === undefined ? undefined : oidc.session?.grantIdFor(clientId));
  if (grantId !== undefined) {
    const grant = await oidc.provider.Grant.find(grantId);
    if (grant !== undefined) keepChosenSpaces(ctx, grant, resource);
    return grant;
  }
  const accountId = oidc.account?.accountId;
  if (clientId !== WEB_CLIENT_ID || accountId === undefined) return undefined;
  const grant = new oidc.provider.Grant({ clientId, accountId });
  // The provider lists the memory scopes among its own (scopes), so they are granted both ways, as consent does.
  grant.addOIDCScope(['openid', ...SCOPES].join(' '));
  grant.addResourceScope(resource, SCOPES.join(' '));
  await grant.save();
  return grant;
}

/**
 * A client signing in again without naming spaces, whose person limited it to some on the consent page, keeps
 * that limit: the request is made to ask for the grant's spaces, since a token's scope is what the grant and the
 * request share (without them it would reach every space). Not where the consent page follows anyway (a scope not
 * granted yet, `prompt=consent`, and every sign-in of a native client): there the person chooses again, with the
 * earlier spaces ticked.
 */
function keepChosenSpaces(ctx: KoaContextWithOIDC, grant: Grant, resource: string): void {
  const { oidc } = ctx;
  const params = oidc.params as { scope?: unknown } | undefined;
  if (params === undefined) return;
  const asked = parseScopes(params.scope);
  if (spaceScopesOf(asked).length > 0) return;
  const granted = parseScopes(grant.getResourceScope(resource));
  const chosen = spaceScopesOf(granted);
  if (chosen.length === 0) return;
  if (oidc.result?.consent === undefined) {
    const grantedOIDC = parseScopes(grant.getOIDCScope());
    const memoryScopes = asked.filter((scope) => (SCOPES as readonly string[]).includes(scope));
    const consentFollows =
      oidc.prompts.has('consent') ||
      oidc.client?.applicationType === 'native' ||
      !memoryScopes.every((scope) => granted.includes(scope) && grantedOIDC.includes(scope));
    if (consentFollows) return;
  }
  params.scope = [...asked, ...chosen].join(' ');
}
