import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { bearerChallenge } from '../auth/resource-server/challenge.js';
import { TokenError, type AuthInfo, type TokenVerifier } from '../auth/resource-server/token-verifier.js';
import { DEFAULT_SCOPE } from '../auth/scopes.js';
import { InsufficientScopeError, type Dispatcher } from '../mcp/dispatcher.js';
import { errorResponse, JsonRpcError, parseMessage, RPC, serializeMessage, type OutgoingMessage } from '../mcp/jsonrpc.js';
import { requestEra, type Era } from '../mcp/protocol.js';
import { headerMismatch, single } from './mcp-headers.js';
import { originAllowed, type HostCheck } from './origin.js';
import type { RateLimit } from './rate-limit.js';

export const UNCONFIGURED_MESSAGE = 'OAuth resource-server is not configured.';

export interface McpRouteOptions {
  readonly dispatcher: Dispatcher;
  /** Undefined when no authorization server is configured: every request gets 500. */
  readonly verifier: TokenVerifier | undefined;
  readonly resourceMetadata: string;
  readonly allowedOrigins: ReadonlySet<string>;
  /** DNS-rebinding protection on a loopback listener; undefined = no Host check. */
  readonly hostAllowed?: HostCheck | undefined;
  /** Runs after authentication (so it can count per subject); undefined = no limit. */
  readonly rateLimit?: RateLimit | undefined;
  readonly maxBodyBytes: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthInfo;
  }
}

const rpcError = (code: number, message: string) => errorResponse(null, new JsonRpcError(code, message));
const notJson = (reply: FastifyReply) => reply.code(415).send(rpcError(RPC.invalidRequest, 'Content-Type must be application/json'));

/**
 * POST /mcp: stateless JSON-RPC over HTTP, MCP 2026-07-28 and the 2025 revisions side by side. No
 * Mcp-Session-Id is issued, and a stale one is ignored.
 */
export async function mcpRoute(app: FastifyInstance, options: McpRouteOptions): Promise<void> {
  // JSON only: Fastify's default text/plain parser would hand a text body to the router as if it were JSON.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: options.maxBodyBytes }, (_request, body, done) => {
    done(null, body);
  });

  app.setErrorHandler((error: Error & { code?: string; statusCode?: number }, request, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply.code(413).send(rpcError(RPC.invalidRequest, `Request body exceeds ${options.maxBodyBytes} bytes`));
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
      return notJson(reply);
    }
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.code(error.statusCode).send(rpcError(RPC.invalidRequest, error.message));
    }
    // A bug: its kind and where it happened, never its message or properties, which may quote memory text.
    request.log.error({ err: { type: error.name, stack: stackFrames(error) } }, 'unhandled error on /mcp');
    return reply.code(500).send(rpcError(RPC.internalError, 'Internal error'));
  });

  /** The request's bearer token; or undefined once the request has been answered (it may not reach /mcp). */
  const presentedToken = (request: FastifyRequest, reply: FastifyReply): string | undefined => {
    if (options.hostAllowed !== undefined && !options.hostAllowed(request.headers.host, request.socket.localPort)) {
      reply.code(403).send(rpcError(RPC.invalidRequest, 'Forbidden: Host not allowed'));
      return undefined;
    }
    if (!originAllowed(request.headers.origin, options.allowedOrigins)) {
      reply.code(403).send(rpcError(RPC.invalidRequest, 'Forbidden: Origin not allowed'));
      return undefined;
    }
    if (options.verifier === undefined) {
      reply.code(500).send(rpcError(RPC.internalError, UNCONFIGURED_MESSAGE));
      return undefined;
    }
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer[ ]+([^ ]+)[ ]*$/i.exec(header) : null;
    // The challenge names the scopes to ask for (MCP 2025-11-25), so a client's first login asks for both.
    if (match === null) {
      reply.header('www-authenticate', bearerChallenge({ resourceMetadata: options.resourceMetadata, scope: DEFAULT_SCOPE }));
      reply.code(401).send(rpcError(RPC.invalidRequest, 'Unauthorized: a bearer token is required'));
      return undefined;
    }
    return match[1]!;
  };

  const refuseToken = (reply: FastifyReply, error: TokenError) =>
    reply
      .header('www-authenticate', bearerChallenge({ resourceMetadata: options.resourceMetadata, error: 'invalid_token', description: error.description, scope: DEFAULT_SCOPE }))
      .code(401)
      .send(rpcError(RPC.invalidRequest, `Unauthorized: ${error.description}`));

  /**
   * Everything a request passes before its body is read, as one hook (each hook Fastify runs costs a turn of
   * its hook chain): Host and Origin, the token, then the per-subject limit (it counts by subject), then, for
   * POST, a JSON Content-Type (a request without any gets 415). Each check either answers the request or lets it on.
   * A callback hook, synchronous all the way for a token already verified: this runs on every request (issue 17).
   */
  const admit = (requireJson: boolean): onRequestHookHandler =>
    function admit(request, reply, done) {
      const token = presentedToken(request, reply);
      if (token === undefined) return;
      const admitAs = (auth: AuthInfo): void => {
        request.auth = auth;
        // Refused: 429, through the error handler above.
        const limited = options.rateLimit?.(request, reply);
        if (limited !== undefined) return done(limited);
        if (requireJson && !isJsonMediaType(request.headers['content-type'])) {
          notJson(reply);
          return;
        }
        done();
      };
      const verdict = options.verifier!.verify(token);
      if (!(verdict instanceof Promise)) return admitAs(verdict);
      verdict
        .then(admitAs, (error: unknown) => {
          if (!(error instanceof TokenError)) throw error;
          refuseToken(reply, error);
        })
        .catch(done);
    };

  // Not async: tools/list and ping are answered within this call, without a promise turn (issue 17). A request
  // answered here returns nothing; one that waits returns its promise to Fastify.
  app.post('/mcp', { onRequest: admit(true) }, (request, reply) => {
    const auth = request.auth!;
    const message = parseMessage(typeof request.body === 'string' ? request.body : '');
    if (message.kind === 'invalid') {
      reply.code(400).send(errorResponse(message.id, message.error));
      return;
    }
    if (message.kind === 'no-reply') {
      if (message.method !== undefined) request.rpc = { method: message.method };
      reply.code(202).send();
      return;
    }
    const { method, params } = message.request;
    request.rpc = { method, tool: method === 'tools/call' && typeof params.name === 'string' ? params.name : undefined };
    const era = requestEra(message.request, single(request.headers['mcp-protocol-version']));
    if (era.kind === 'modern') {
      const mismatch = headerMismatch(message.request, era.claimedVersion, request.headers);
      if (mismatch !== undefined) {
        reply.code(400).send(errorResponse(message.request.id, mismatch));
        return;
      }
    }
    const answer = (response: OutgoingMessage) => {
      const { bytes, release } = serializeMessage(response);
      // The response's 'close' comes once its bytes are written out, or once its connection is gone.
      reply.raw.once('close', release);
      return reply.code(statusOf(response, era)).type('application/json; charset=utf-8').send(bytes);
    };
    const refuseScope = (error: unknown) => {
      if (!(error instanceof InsufficientScopeError)) throw error;
      reply.header(
        'www-authenticate',
        bearerChallenge({
          resourceMetadata: options.resourceMetadata,
          error: 'insufficient_scope',
          description: error.message,
          scope: error.challenge.join(' '),
        }),
      );
      return reply.code(403).send(errorResponse(message.request.id, new JsonRpcError(RPC.invalidRequest, `Forbidden: ${error.message}`)));
    };
    let response: OutgoingMessage | Promise<OutgoingMessage>;
    try {
      response = options.dispatcher.handle(message.request, { subject: auth.subject, scopes: auth.scopes, spaceLimit: auth.spaceLimit, groups: auth.groups }, era);
    } catch (error) {
      refuseScope(error);
      return;
    }
    if (response instanceof Promise) return response.then(answer, refuseScope);
    answer(response);
    return;
  });

  // No SSE stream and no sessions: GET and DELETE are refused, but only once the caller is known. Clients
  // (mcp-remote among them) probe with GET first, and must get the 401 challenge that starts their login.
  const methodNotAllowed = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply.code(405).header('allow', 'POST').send(rpcError(RPC.invalidRequest, 'Method not allowed: this server speaks JSON-RPC over POST only'));
  app.get('/mcp', { onRequest: admit(false) }, methodNotAllowed);
  app.delete('/mcp', { onRequest: admit(false) }, methodNotAllowed);
}

/**
 * A JSON-RPC error travels with 200 under the 2025 revisions. 2026-07-28 gives it an HTTP status, so that
 * intermediaries see it: 404 for an unknown method, 400 for the rest (invalid params, version, headers).
 */
function statusOf(response: OutgoingMessage, era: Era): number {
  if (!('error' in response) || era.kind === 'legacy') return 200;
  return response.error.code === RPC.methodNotFound ? 404 : 400;
}

/** `application/json`, in any letter case, with or without parameters such as `charset`. */
const JSON_MEDIA_TYPE = /^[ \t]*application\/json[ \t]*(?:;|$)/i;
const isJsonMediaType = (header: string | undefined): boolean => header !== undefined && JSON_MEDIA_TYPE.test(header);

/** The stack without its first line (the message). */
function stackFrames(error: Error): string {
  return (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line)).join('\n');
}
