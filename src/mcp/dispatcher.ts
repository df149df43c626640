import { z } from 'zod';
import { SCOPES, type Scope } from '../auth/scopes.js';
import { errorResponse, JsonRpcError, PreSerialized, RPC, type JsonRpcRequest, type OutgoingMessage } from './jsonrpc.js';
import { isRecord, LEGACY_PROTOCOL_VERSIONS, META, MODERN_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS, type Era } from './protocol.js';
import { listPrompt, type Prompt } from './prompt.js';
import { describeZodError, listTool, type Tool, type ToolContext } from './tool.js';

/**
 * How long a client may reuse tools/list and server/discover (2026-07-28 cache hints). Both change only when
 * the service is redeployed. tools/list is `private` (it answers an authenticated caller, and a list may come
 * to depend on the caller's scopes); server/discover holds nothing about the caller.
 */
const LIST_TTL_MS = 3_600_000;

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
  /** A value when the method answers without waiting (ping, tools/list, ...), else a promise: issue 17. */
  handle(request: JsonRpcRequest, context: ToolContext, era: Era): OutgoingMessage | Promise<OutgoingMessage>;
}

export interface DispatchObserver {
  /** Called once per request with its method and whether the response is a result or a JSON-RPC error. */
  onRequest?(method: string, outcome: 'ok' | 'error', seconds: number): void;
  /** Called once per call of a known tool with the outcome: 'ok', a tool error code, or 'internal_error'. */
  onToolCall?(tool: string, outcome: string, seconds: number): void;
}

type Method = (params: Record<string, unknown>, context: ToolContext) => unknown;

const getPromptParams = z.object({
  name: z.string({ error: 'params.name must be a string' }),
  arguments: z.record(z.string(), z.string(), { error: 'params.arguments must be an object of strings' }).optional(),
});

const callParams = z.object({
  name: z.string({ error: 'params.name must be a string' }),
  arguments: z.record(z.string(), z.unknown(), { error: 'params.arguments must be an object' }).optional(),
});

export function createDispatcher(serverInfo: ServerInfo, tools: readonly Tool[], prompts: readonly Prompt[], observer: DispatchObserver = {}): Dispatcher {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const promptsByName = new Map(prompts.map((prompt) => [prompt.name, prompt]));
  const capabilities = { tools: { listChanged: false }, ...(prompts.length > 0 ? { prompts: { listChanged: false } } : {}) };
  const implementation = { name: serverInfo.name, title: serverInfo.title, version: serverInfo.version };
  const listed = tools.map(listTool);
  /** A 2026-07-28 result: its type, and the server naming itself (there is no handshake to do it once). */
  const complete = (result: object) => ({ resultType: 'complete', ...result, _meta: { [META.serverInfo]: implementation } });

  async function callTool(params: Record<string, unknown>, context: ToolContext) {
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
      // Invalid arguments are a tool failure (isError) in every revision, so the model can read and fix them.
      const result = await tool.call(params.arguments ?? {}, context);
      outcome = result.isError === true ? result.structuredContent.error.code : 'ok';
      return result;
    } finally {
      observer.onToolCall?.(tool.name, outcome, (performance.now() - started) / 1000);
    }
  }

  async function getPrompt(params: Record<string, unknown>, context: ToolContext) {
    const parsed = getPromptParams.safeParse(params);
    if (!parsed.success) throw new JsonRpcError(RPC.invalidParams, `Invalid params: ${describeZodError(parsed.error)}`);
    const prompt = promptsByName.get(parsed.data.name);
    if (prompt === undefined) throw new JsonRpcError(RPC.invalidParams, `Unknown prompt: ${parsed.data.name}`);
    const unknown = Object.keys(parsed.data.arguments ?? {});
    if (unknown.length > 0) throw new JsonRpcError(RPC.invalidParams, `Invalid params: the ${prompt.name} prompt takes no arguments (got ${unknown.join(', ')})`);
    if (!context.scopes.includes(prompt.scope)) throw new InsufficientScopeError(prompt.scope, context.scopes);
    return prompt.get(context);
  }
  const listedPrompts = prompts.map(listPrompt);

  const legacyList = new PreSerialized({ tools: listed });
  const legacy: Record<string, Method> = {
    initialize(params) {
      const requested = params.protocolVersion;
      const protocolVersion = LEGACY_PROTOCOL_VERSIONS.find((version) => version === requested) ?? LEGACY_PROTOCOL_VERSIONS[0];
      return { protocolVersion, capabilities, serverInfo: implementation, instructions: serverInfo.instructions };
    },
    ping() {
      return {};
    },
    'tools/list'() {
      return legacyList;
    },
    'tools/call': callTool,
    'prompts/list'() {
      return { prompts: listedPrompts };
    },
    'prompts/get': getPrompt,
  };

  // 2026-07-28 has no initialize and no ping: they are unknown methods there.
  const discoverResult = complete({
    supportedVersions: SUPPORTED_PROTOCOL_VERSIONS,
    capabilities,
    instructions: serverInfo.instructions,
    ttlMs: LIST_TTL_MS,
    cacheScope: 'public',
  });
  const modernList = new PreSerialized(complete({ tools: listed, ttlMs: LIST_TTL_MS, cacheScope: 'private' }));
  const modern: Record<string, Method> = {
    'server/discover'() {
      return discoverResult;
    },
    'tools/list'() {
      return modernList;
    },
    async 'tools/call'(params, context) {
      return complete(await callTool(params, context));
    },
    'prompts/list'() {
      return complete({ prompts: listedPrompts, ttlMs: LIST_TTL_MS, cacheScope: 'private' });
    },
    async 'prompts/get'(params, context) {
      return complete(await getPrompt(params, context));
    },
  };

  // Synchronous where the method is: a promise per layer cost tools/list and ping about a microsecond (issue 17).
  const dispatch = (request: JsonRpcRequest, context: ToolContext, era: Era): OutgoingMessage | Promise<OutgoingMessage> => {
    const answer = (result: unknown): OutgoingMessage => ({ jsonrpc: '2.0', id: request.id, result });
    const answerError = (error: unknown): OutgoingMessage => {
      if (error instanceof JsonRpcError) return errorResponse(request.id, error);
      throw error;
    };
    let result: unknown;
    try {
      if (era.kind === 'modern') checkEnvelope(request.params, era.claimedVersion);
      const methods = era.kind === 'modern' ? modern : legacy;
      const method = Object.hasOwn(methods, request.method) ? methods[request.method] : undefined;
      if (method === undefined) throw new JsonRpcError(RPC.methodNotFound, `Method not found: ${request.method}`);
      result = method(request.params, context);
    } catch (error) {
      return answerError(error);
    }
    return result instanceof Promise ? result.then(answer, answerError) : answer(result);
  };

  return {
    handle(request, context, era) {
      const started = performance.now();
      const observe = (outcome: 'ok' | 'error') => observer.onRequest?.(request.method, outcome, (performance.now() - started) / 1000);
      const observed = (response: OutgoingMessage): OutgoingMessage => {
        observe('result' in response ? 'ok' : 'error');
        return response;
      };
      const failed = (error: unknown): never => {
        observe('error');
        throw error;
      };
      let response: OutgoingMessage | Promise<OutgoingMessage>;
      try {
        response = dispatch(request, context, era);
      } catch (error) {
        return failed(error);
      }
      return response instanceof Promise ? response.then(observed, failed) : observed(response);
    },
  };
}

/**
 * A 2026-07-28 request's envelope: its protocol version (one served per request) and the client's
 * capabilities are required; the client's name is optional.
 */
function checkEnvelope(params: Record<string, unknown>, claimedVersion: string | undefined): void {
  const meta = params._meta;
  if (!isRecord(meta)) {
    throw new JsonRpcError(RPC.invalidParams, 'Invalid params: _meta is required (a 2026-07-28 request carries its protocol version and client capabilities there)');
  }
  if (claimedVersion === undefined) {
    throw new JsonRpcError(RPC.invalidParams, `Invalid params: _meta["${META.protocolVersion}"] must be a protocol version string`);
  }
  if (!isRecord(meta[META.clientCapabilities])) {
    throw new JsonRpcError(RPC.invalidParams, `Invalid params: _meta["${META.clientCapabilities}"] must be an object`);
  }
  if (!(MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(claimedVersion)) {
    const legacy = (LEGACY_PROTOCOL_VERSIONS as readonly string[]).includes(claimedVersion);
    throw new JsonRpcError(
      RPC.unsupportedProtocolVersion,
      legacy
        ? `Unsupported protocol version: ${claimedVersion} is served after an initialize handshake, not per request`
        : `Unsupported protocol version: ${claimedVersion}`,
      { supported: SUPPORTED_PROTOCOL_VERSIONS, requested: claimedVersion },
    );
  }
}
