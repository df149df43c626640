import { z } from 'zod';
import { SCOPES, type Scope } from '../auth/scopes.js';
import { errorResponse, JsonRpcError, PreSerialized, RPC, type JsonRpcRequest, type OutgoingMessage } from './jsonrpc.js';
import { describeZodError, listTool, type Tool, type ToolContext } from './tool.js';

export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;

/** Raised when the token lacks the scope a tool needs; the HTTP layer answers 403 (RFC 6750 §3.1). */
export class InsufficientScopeError extends Error {
  /** The scope the call needs and the token lacks. */
  readonly scope: Scope;
  /**
   * What the challenge asks for: the missing scope and the ones the token already holds, so a client that
   * replaces its scopes with the challenge's (as 2025-era clients do) does not lose the others.
   */
  readonly challenge: readonly Scope[];

  constructor(scope: Scope, granted: readonly string[]) {
    super(`this call needs the "${scope}" scope`);
    this.name = 'InsufficientScopeError';
    this.scope = scope;
    this.challenge = SCOPES.filter((candidate) => candidate === scope || granted.includes(candidate));
  }
}

export interface ServerInfo {
  readonly name: string;
  readonly title: string;
  readonly version: string;
  readonly instructions: string;
}

export interface Dispatcher {
  handle(request: JsonRpcRequest, context: ToolContext): Promise<OutgoingMessage>;
}

export interface DispatchObserver {
  /** Called once per request with its method and whether the response is a result or a JSON-RPC error. */
  onRequest?(method: string, outcome: 'ok' | 'error', seconds: number): void;
  /** Called once per call of a known tool with the outcome: 'ok', a tool error code, or 'internal_error'. */
  onToolCall?(tool: string, outcome: string, seconds: number): void;
}

const callParams = z.object({
  name: z.string({ error: 'params.name must be a string' }),
  arguments: z.record(z.string(), z.unknown(), { error: 'params.arguments must be an object' }).optional(),
});

export function createDispatcher(serverInfo: ServerInfo, tools: readonly Tool[], observer: DispatchObserver = {}): Dispatcher {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const listResult = new PreSerialized({ tools: tools.map(listTool) });

  const methods: Record<string, (params: Record<string, unknown>, context: ToolContext) => Promise<unknown>> = {
    async initialize(params) {
      const requested = params.protocolVersion;
      const protocolVersion = SUPPORTED_PROTOCOL_VERSIONS.find((version) => version === requested) ?? SUPPORTED_PROTOCOL_VERSIONS[0];
      return {
        protocolVersion,
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: serverInfo.name, title: serverInfo.title, version: serverInfo.version },
        instructions: serverInfo.instructions,
      };
    },
    async ping() {
      return {};
    },
    async 'tools/list'() {
      return listResult;
    },
    async 'tools/call'(params, context) {
      const parsed = callParams.safeParse(params);
      if (!parsed.success) throw new JsonRpcError(RPC.invalidParams, `Invalid params: ${describeZodError(parsed.error)}`);
      const tool = byName.get(parsed.data.name);
      if (tool === undefined) throw new JsonRpcError(RPC.invalidParams, `Unknown tool: ${parsed.data.name}`);
      if (!context.scopes.includes(tool.scope)) throw new InsufficientScopeError(tool.scope, context.scopes);
      const started = performance.now();
      let outcome = 'internal_error';
      try {
        // The caller's own object, not zod's copy: a record parse drops an own "__proto__" key (it becomes the
        // copy's prototype), which would then slip past the tool's strict schema instead of being refused.
        const result = await tool.call(params.arguments ?? {}, context);
        outcome = result.isError === true ? result.structuredContent.error.code : 'ok';
        return result;
      } finally {
        observer.onToolCall?.(tool.name, outcome, (performance.now() - started) / 1000);
      }
    },
  };

  const dispatch = async (request: JsonRpcRequest, context: ToolContext): Promise<OutgoingMessage> => {
    const method = Object.hasOwn(methods, request.method) ? methods[request.method] : undefined;
    if (method === undefined) {
      return errorResponse(request.id, new JsonRpcError(RPC.methodNotFound, `Method not found: ${request.method}`));
    }
    try {
      return { jsonrpc: '2.0', id: request.id, result: await method(request.params, context) };
    } catch (error) {
      if (error instanceof JsonRpcError) return errorResponse(request.id, error);
      throw error;
    }
  };

  return {
    async handle(request, context) {
      const started = performance.now();
      let outcome: 'ok' | 'error' = 'error';
      try {
        const response = await dispatch(request, context);
        if ('result' in response) outcome = 'ok';
        return response;
      } finally {
        observer.onRequest?.(request.method, outcome, (performance.now() - started) / 1000);
      }
    },
  };
}
