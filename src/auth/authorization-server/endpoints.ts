import type { IncomingMessage } from 'node:http';

/** Where the built-in authorization server answers (all relative to BaseUrl). */
export const ROUTES = {
  authorization: '/authorize',
  token: '/token',
  registration: '/register',
  revocation: '/revoke',
  jwks: '/jwks',
} as const;

export const INTERACTION_PATH = '/oauth/interaction';

/** The cookie naming a browser's sign-in session at the authorization server (signing out of the page ends it). */
export const SESSION_COOKIE = '_session';

/** Makes oidc-provider see BaseUrl's scheme and host whatever the request said (it trusts X-Forwarded-*). */
export function forceIssuerOrigin(request: IncomingMessage, issuer: URL): void {
  request.headers['x-forwarded-proto'] = issuer.protocol.slice(0, -1);
  request.headers['x-forwarded-host'] = issuer.host;
}
