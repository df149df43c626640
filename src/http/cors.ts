import type { FastifyReply, FastifyRequest } from 'fastify';
import { originAllowed } from './origin.js';

/**
 * CORS for browser-based MCP clients (web apps; the Inspector 2.x calls from its backend). The discovery
 * documents and the OAuth endpoints a public client calls from script (token, registration, revocation,
 * keys) answer any origin: they take no cookies, and a code is useless without its PKCE verifier. `/mcp`
 * answers only the origins its Origin check admits. Headers go on the raw response so the authorization
 * server's own responses carry them too; preflights are answered here.
 */
export interface CorsOptions {
  readonly allowedOrigins: ReadonlySet<string>;
  /** The OAuth endpoints (present only with the built-in authorization server). */
  readonly publicPaths: readonly string[];
}

const PUBLIC_PREFIXES = ['/.well-known/oauth-protected-resource', '/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'];
const ALLOW_HEADERS = 'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id, Last-Event-ID';
const EXPOSE_HEADERS = 'WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version, Retry-After';

/**
 * Adds the CORS headers a request needs, and answers a preflight. Says whether it answered (then the request
 * goes no further). Synchronous, for the one onRequest hook every request passes (src/app.ts).
 */
export function corsHandler(options: CorsOptions): (request: FastifyRequest, reply: FastifyReply) => boolean {
  const publicPaths = new Set(options.publicPaths);

  return (request, reply) => {
    const origin = request.headers.origin;
    if (origin === undefined) return false;
    const path = (request.raw.url ?? '/').split('?')[0]!;
    const isPublic = publicPaths.has(path) || PUBLIC_PREFIXES.some((prefix) => path.startsWith(prefix));
    const isMcp = path === '/mcp';
    if (!isPublic && !isMcp) return false;

    const preflight = request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
    if (isMcp && !originAllowed(origin, options.allowedOrigins)) {
      // No CORS headers: the browser refuses, and /mcp itself answers 403.
      if (!preflight) return false;
      reply.code(403).send();
      return true;
    }
    const raw = reply.raw;
    raw.setHeader('access-control-allow-origin', isPublic ? '*' : origin);
    if (isMcp) raw.setHeader('vary', 'Origin');
    if (!preflight) {
      raw.setHeader('access-control-expose-headers', EXPOSE_HEADERS);
      return false;
    }
    raw.setHeader('access-control-allow-methods', isMcp ? 'GET, POST, DELETE, OPTIONS' : 'GET, POST, OPTIONS');
    raw.setHeader('access-control-allow-headers', ALLOW_HEADERS);
    raw.setHeader('access-control-max-age', '600');
    reply.code(204).send();
    return true;
  };
}
