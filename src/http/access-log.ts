import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from '../logger.js';

/** What the access line says about a JSON-RPC request (set by the /mcp route once it has parsed the body). */
export interface RpcSummary {
  readonly method: string;
  /** The tool a `tools/call` names. */
  readonly tool?: string | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    rpc?: RpcSummary;
  }
}

/** Method and tool names come from the client: logged when they look like names, else as "(other)". */
const NAME = /^[A-Za-z0-9_./:-]{1,64}$/;
const asName = (value: string): string => (NAME.test(value) ? value : '(other)');

/**
 * One access line per request, "request completed", written when the response is complete, in place of Fastify's
 * two ("incoming request" at the start, "request completed" at the end): `reqId`, `req` (method, path without
 * the query string, client address as TrustProxy decides it), `rpc` on /mcp (JSON-RPC method and tool), `res`
 * (status) and `responseTime` (ms). Fastify's other lines (errors, streams that failed) are kept; its "route not
 * found" line is dropped, since it quoted the query string and the access line shows the 404.
 * Written through the service's logger with `reqId` as a field (not through the request's child logger), from
 * fields built here that cannot hold a credential: so without the logger's redaction, whose header paths at any
 * depth made pino run every field of the line through a redacting copy (11 µs of a tools/list's ~60, issue 40).
 */
export class AccessLog extends LogController {
  readonly #logger: Logger;

  constructor(logger: Logger) {
    super();
    this.#logger = logger.child({}, { redact: [] });
  }

  override incomingRequest(): void {}

  override routeNotFound(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const rpc = request.rpc;
    const fields = {
      req: request,
      rpc: rpc === undefined ? undefined : { method: asName(rpc.method), tool: rpc.tool === undefined ? undefined : asName(rpc.tool) },
      res: { statusCode: reply.statusCode },
      responseTime: Math.round(reply.elapsedTime * 1000) / 1000,
    };
    // A response that failed on the way out: through the request's own logger, redacting as for every error.
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else this.#logger.info({ reqId: request.id, ...fields }, 'request completed');
  }
}
