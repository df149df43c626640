import { errors } from 'oidc-provider';
import { isUrlClientId } from './client-metadata-fetch.js';

/**
 * What a client may say about itself, whether it registers (RFC 7591) or publishes a metadata document (CIMD):
 * bounded field by field, redirect URIs that are https or loopback, and public clients when identified by URL.
 * oidc-provider drops every property it does not know (software_id, software_version, …) before this runs.
 */

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
/**
 * Schemes that are not a native app's own (RFC 8252 §7.1): the web's, and those a browser would run or open
 * itself rather than hand to an app.
 */
const NOT_PRIVATE_USE = new Set(['http:', 'https:', 'javascript:', 'data:', 'file:', 'vbscript:', 'about:', 'blob:', 'ftp:', 'ws:', 'wss:', 'mailto:', 'tel:', 'sms:', 'intent:', 'filesystem:', 'view-source:', 'chrome:', 'edge:']);

/** An http callback on the person's own machine (RFC 8252 §7.3): matched on any port. */
function isLoopback(parsed: URL): boolean {
  return parsed.protocol === 'http:' && LOOPBACK_HOSTS.has(parsed.hostname);
}

/** A desktop app's own scheme, such as Cursor's `cursor://anysphere.cursor-mcp/oauth/callback` (RFC 8252 §7.1). */
function isPrivateUse(parsed: URL): boolean {
  return !NOT_PRIVATE_USE.has(parsed.protocol) && (parsed.host !== '' || parsed.pathname.replace(/^\/+/, '') !== '');
}

/**
 * Redirect URIs must be https (hosted connectors: claude.ai, chatgpt.com), http on a loopback address (desktop
 * clients, the Inspector, mcp-remote), or a desktop app's private-use scheme. PKCE, which every client must use,
 * is what makes a loopback or private-use callback safe to hand a code to.
 */
export function redirectUriAllowed(uri: string): boolean {
  const parsed = URL.parse(uri);
  if (parsed === null || parsed.hash !== '' || parsed.username !== '' || parsed.password !== '') return false;
  return parsed.protocol === 'https:' || isLoopback(parsed) || isPrivateUse(parsed);
}

/**
 * Whether the client is a native app in oidc-provider's terms, which it must be for a private-use scheme, and for a
 * loopback callback to match on any port: the port is the one the app could open when it signs in.
 */
function needsNative(uris: readonly unknown[]): boolean {
  return uris.some((uri) => {
    const parsed = typeof uri === 'string' ? URL.parse(uri) : null;
    return parsed !== null && (isLoopback(parsed) || isPrivateUse(parsed));
  });
}

/** Longest string per property, in characters; any other string property gets DEFAULT_MAX_CHARS. */
const MAX_CHARS: Readonly<Record<string, number>> = {
  client_name: 200,
  contacts: 320,
  scope: 500,
  default_acr_values: 200,
};
const DEFAULT_MAX_CHARS = 2_000;
/** Most items in any array property (redirect_uris, contacts, grant_types, …). */
const MAX_ITEMS: Readonly<Record<string, number>> = { contacts: 5 };
const DEFAULT_MAX_ITEMS = 10;
/** An inline key set, serialised. */
const MAX_JWKS_CHARS = 4_096;

const SECRET_METHODS = new Set(['client_secret_basic', 'client_secret_post', 'client_secret_jwt']);

/** The first problem with a client's metadata, naming the property, or undefined. */
export function metadataProblem(metadata: Readonly<Record<string, unknown>>): string | undefined {
  for (const [property, value] of Object.entries(metadata)) {
    if (value === undefined || value === null) continue;
    if (property === 'jwks') {
      if (JSON.stringify(value).length > MAX_JWKS_CHARS) return `jwks must be at most ${MAX_JWKS_CHARS} characters of JSON`;
      continue;
    }
    const maxChars = MAX_CHARS[property] ?? DEFAULT_MAX_CHARS;
    if (typeof value === 'string' && value.length > maxChars) {
      return `${property} must be at most ${maxChars} characters (got ${value.length})`;
    }
    if (Array.isArray(value)) {
      const maxItems = MAX_ITEMS[property] ?? DEFAULT_MAX_ITEMS;
      if (value.length > maxItems) return `${property} must have at most ${maxItems} entries (got ${value.length})`;
      const long = value.find((item) => typeof item === 'string' && item.length > maxChars) as string | undefined;
      if (long !== undefined) return `${property} entries must be at most ${maxChars} characters each (got ${long.length})`;
    }
  }
  const uris = Array.isArray(metadata.redirect_uris) ? (metadata.redirect_uris as unknown[]) : [];
  const refused = uris.filter((uri) => typeof uri !== 'string' || !redirectUriAllowed(uri));
  if (refused.length > 0) {
    return `redirect_uris must use https, http on a loopback address (127.0.0.1, [::1], localhost), or an app's own scheme (such as cursor://); refused: ${refused.map(String).join(', ')}`;
  }
  return undefined;
}

/**
 * A custom metadata name nobody sends: oidc-provider runs the `extraClientMetadata` validator once per listed
 * property, with the client's whole metadata, before its own checks, on every registration and every client it
 * loads (registered, or fetched from a metadata document). That is where these rules hook in.
 */
export const CLIENT_POLICY_HOOK = 'memory_service_client_policy';

export function validateClientMetadata(key: string, metadata: Record<string, unknown>): void {
  if (key !== CLIENT_POLICY_HOOK) return;
  const problem = metadataProblem(metadata);
  if (problem !== undefined) throw new errors.InvalidClientMetadata(problem);
  // No per-client scope list: oidc-provider would refuse any scope beyond the one registered, and clients register
  // with the scope of their first login, so a later step-up (read, then write) would fail. What a client gets is
  // what the person consents to; clients registered before keep loading, since this runs on every load.
  delete metadata.scope;
  if (Array.isArray(metadata.redirect_uris) && needsNative(metadata.redirect_uris)) metadata.application_type = 'native';
  // A client identified by its metadata document's URL has no secret: it is public unless it names another
  // method (a document naming a secret method is refused before this). The default here is RFC 7591's secret.
  if (isUrlClientId(metadata.client_id) && SECRET_METHODS.has(String(metadata.token_endpoint_auth_method))) {
    metadata.token_endpoint_auth_method = 'none';
  }
}
