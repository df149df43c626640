import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * MCP 2026-07-28 on the wire, beside the 2025 revisions on the same endpoint: the per-request envelope in
 * `_meta`, the request headers that mirror the body, server/discover, cache hints, the HTTP statuses the
 * revision gives its errors, and the 2025 answers left as they were.
 */
const MODERN = '2026-07-28';
const SERVER_INFO = { name: 'memory-service', title: 'Memory Service', version: expect.stringMatching(/^\d+\.\d+\.\d+/) };

const envelope = (overrides: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'wire-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
  ...overrides,
});

interface RpcAnswer {
  status: number;
  body: { jsonrpc: string; id: unknown; result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };
}

describe.each(engines)('MCP 2026-07-28 beside the 2025 revisions on %s', (engine) => {
  let server: TestServer;
  let token: string;
  let nextId = 1;

  beforeAll(async () => {
    server = await startTestServer({ engine });
    token = await server.token('modern-wire');
  });
  afterAll(async () => {
    await server.close();
  });

  /** A 2026-07-28 request with the headers a conforming client sends, unless `headers` says otherwise. */
  async function modern(method: string, params: Record<string, unknown> = {}, headers: Record<string, string | undefined> = {}): Promise<RpcAnswer> {
    const body = { jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: envelope(params._meta as Record<string, unknown>) } };
    if (params._meta === null) delete (body.params as { _meta?: unknown })._meta;
    const name = typeof params.name === 'string' ? params.name : undefined;
    const merged: Record<string, string | undefined> = {
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': MODERN,
      'mcp-method': method,
      ...(name === undefined ? {} : { 'mcp-name': name }),
      ...headers,
    };
    const response = await server.post(body, Object.fromEntries(Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== undefined)));
    return { status: response.status, body: (await response.json()) as RpcAnswer['body'] };
  }

  async function legacy(method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<RpcAnswer> {
    const response = await server.post({ jsonrpc: '2.0', id: nextId++, method, params }, { authorization: `Bearer ${token}`, ...headers });
    return { status: response.status, body: (await response.json()) as RpcAnswer['body'] };
  }

  it('answers server/discover with every version it serves, its capabilities, instructions and cache hints', async () => {
    const { status, body } = await modern('server/discover');
    expect(status).toBe(200);
    expect(body.result).toEqual({
      resultType: 'complete',
      supportedVersions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'],
      capabilities: { tools: { listChanged: false }, prompts: { listChanged: false } },
      instructions: expect.stringMatching(/`recall`/),
      ttlMs: 3_600_000,
      cacheScope: 'public',
      _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
    });
  });

  it('lists the same tools as the 2025 revisions, with cache hints private to the caller', async () => {
    const { status, body } = await modern('tools/list');
    expect(status).toBe(200);
    const { tools, ...rest } = body.result!;
    expect(rest).toEqual({ resultType: 'complete', ttlMs: 3_600_000, cacheScope: 'private', _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO } });
    const before = await legacy('tools/list');
    expect(before.body.result).toEqual({ tools });
    expect((tools as { name: string }[]).map((tool) => tool.name)).toEqual(['remember', 'recall', 'list_memories', 'correct', 'forget', 'confirm', 'brief', 'spaces']);
  });

  it('answers tools/call as the 2025 revisions do, plus resultType and the server in _meta', async () => {
    const stored = await modern('tools/call', { name: 'remember', arguments: { text: 'The user keeps bees on the roof' } });
    expect(stored.status).toBe(200);
    expect(stored.body.result).toMatchObject({
      resultType: 'complete',
      structuredContent: { ok: true, memory_id: expect.any(Number) },
      _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
    });
    expect(stored.body.result!.isError).toBeUndefined();

    const unknownId = { name: 'forget', arguments: { memory_id: 999_999 } };
    const { resultType, _meta, ...modernAnswer } = (await modern('tools/call', unknownId)).body.result!;
    expect(resultType).toBe('complete');
    expect(_meta).toBeDefined();
    expect(modernAnswer).toEqual((await legacy('tools/call', unknownId)).body.result);
  });

  it('returns invalid arguments as a tool error the model can read, in both eras', async () => {
    for (const answer of [
      await modern('tools/call', { name: 'recall', arguments: { query: 'bees', limit: 500, tag_match: 'some' } }),
      await legacy('tools/call', { name: 'recall', arguments: { query: 'bees', limit: 500, tag_match: 'some' } }),
    ]) {
      expect(answer.status).toBe(200);
      expect(answer.body.result).toMatchObject({
        isError: true,
        structuredContent: { ok: false, error: { code: 'INVALID_INPUT', message: 'limit: must be an integer from 1 to 50; tag_match: must be one of "any", "all"' } },
      });
    }
  });

  it('refuses an envelope without its protocol version or client capabilities with 400 invalid params', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['no _meta', { _meta: null }],
      ['no protocol version', { _meta: { 'io.modelcontextprotocol/protocolVersion': undefined } }],
      ['a protocol version that is not a string', { _meta: { 'io.modelcontextprotocol/protocolVersion': 20260728 } }],
      ['no client capabilities', { _meta: { 'io.modelcontextprotocol/clientCapabilities': undefined } }],
    ];
    for (const [why, params] of cases) {
      const { status, body } = await modern('server/discover', params);
      expect(status, why).toBe(400);
      expect(body.error?.code, why).toBe(-32602);
      expect(body.id, why).toEqual(expect.any(Number));
    }
    // clientInfo is a SHOULD, never required.
    expect((await modern('server/discover', { _meta: { 'io.modelcontextprotocol/clientInfo': undefined } })).status).toBe(200);
  });

  it('refuses a version it does not serve per request with 400 UnsupportedProtocolVersion, listing the ones it does', async () => {
    for (const requested of ['2099-01-01', 'v999.0.0', '2025-11-25']) {
      const { status, body } = await modern('tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': requested } }, { 'mcp-protocol-version': requested });
      expect(status, requested).toBe(400);
      expect(body.error).toMatchObject({ code: -32022, data: { supported: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'], requested } });
    }
  });

  it('refuses headers that do not mirror the body with 400 HeaderMismatch', async () => {
    const remember = { name: 'remember', arguments: { text: 'The user must never see this stored' } };
    const cases: [string, string, Record<string, unknown>, Record<string, string | undefined>][] = [
      ['no MCP-Protocol-Version', 'tools/list', {}, { 'mcp-protocol-version': undefined }],
      ['MCP-Protocol-Version differs from _meta', 'tools/list', {}, { 'mcp-protocol-version': '2025-11-25' }],
      ['no Mcp-Method', 'tools/list', {}, { 'mcp-method': undefined }],
      ['Mcp-Method differs', 'tools/list', {}, { 'mcp-method': 'prompts/list' }],
      ['Mcp-Method in other letter case (values are case-sensitive)', 'tools/list', {}, { 'mcp-method': 'TOOLS/LIST' }],
      ['no Mcp-Name', 'tools/call', remember, { 'mcp-name': undefined }],
      ['Mcp-Name differs', 'tools/call', remember, { 'mcp-name': 'forget' }],
      ['Mcp-Name base64 of another name', 'tools/call', remember, { 'mcp-name': `=?base64?${Buffer.from('forget').toString('base64')}?=` }],
      ['Mcp-Name malformed base64', 'tools/call', remember, { 'mcp-name': '=?base64?not*base64?=' }],
      ['Mcp-Name for a method that names nothing', 'tools/list', {}, { 'mcp-name': 'remember' }],
    ];
    for (const [why, method, params, headers] of cases) {
      const { status, body } = await modern(method, params, headers);
      expect(status, why).toBe(400);
      expect(body.error?.code, why).toBe(-32020);
      expect(body.error?.message, why).toMatch(/^Header mismatch: /);
    }
    // Nothing was stored by the refused tools/call requests.
    const listed = await modern('tools/call', { name: 'list_memories', arguments: {} });
    expect(JSON.stringify(listed.body.result)).not.toContain('must never see this');
  });

  it('accepts header names in any letter case and a base64-encoded Mcp-Name', async () => {
    const encoded = `=?base64?${Buffer.from('recall').toString('base64')}?=`;
    const { status, body } = await modern('tools/call', { name: 'recall', arguments: { query: 'bees' } }, { 'mcp-name': undefined, 'MCP-NAME': encoded });
    expect(status).toBe(200);
    expect(body.result).toMatchObject({ resultType: 'complete', structuredContent: { ok: true } });
  });

  it('answers 404 Method not found for the methods 2026-07-28 removed and unknown ones, and 400 for an unknown tool', async () => {
    for (const method of ['initialize', 'ping', 'logging/setLevel', 'resources/list', 'no/such/method']) {
      const { status, body } = await modern(method);
      expect(status, method).toBe(404);
      expect(body.error?.code, method).toBe(-32601);
    }
    const unknownTool = await modern('tools/call', { name: 'no_such_tool', arguments: {} });
    expect(unknownTool.status).toBe(400);
    expect(unknownTool.body.error).toMatchObject({ code: -32602, message: 'Unknown tool: no_such_tool' });
  });

  it('challenges a modern call without the tool scope with 403, like a 2025 one', async () => {
    const readOnly = await server.token('modern-wire', { scope: 'memory:read' });
    const response = await server.post(
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'remember', arguments: { text: 'The user likes figs' }, _meta: envelope() } },
      { authorization: `Bearer ${readOnly}`, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'remember' },
    );
    expect(response.status).toBe(403);
    expect(response.headers.get('www-authenticate')).toContain('scope="memory:read memory:write"');
  });

  it('keeps the 2025 answers: no envelope, no headers checked, errors with 200', async () => {
    const init = await legacy('initialize', { protocolVersion: MODERN });
    // initialize is the 2025 handshake: asked for 2026-07-28 there, it offers the newest 2025 revision.
    expect(init.body.result).toEqual({
      protocolVersion: '2025-11-25',
      capabilities: { tools: { listChanged: false }, prompts: { listChanged: false } },
      serverInfo: SERVER_INFO,
      instructions: expect.any(String),
    });
    expect(await legacy('ping', {}, { 'mcp-method': 'something/else', 'mcp-protocol-version': '2025-06-18' })).toEqual({
      status: 200,
      body: { jsonrpc: '2.0', id: expect.any(Number), result: {} },
    });
    const unknown = await legacy('server/discover');
    expect(unknown.status).toBe(200);
    expect(unknown.body.error?.code).toBe(-32601);
    const listed = await legacy('tools/list');
    expect(Object.keys(listed.body.result!)).toEqual(['tools']);
  });

  it('lets a browser client send the 2026-07-28 headers (CORS preflight)', async () => {
    const response = await fetch(server.mcpUrl, {
      method: 'OPTIONS',
      headers: { origin: new URL(server.url).origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'mcp-method, mcp-name' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-headers')).toMatch(/Mcp-Protocol-Version, Mcp-Method, Mcp-Name/);
  });

  it('takes notifications under either revision with 202', async () => {
    const response = await server.post(
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: envelope() } },
      { authorization: `Bearer ${token}`, 'mcp-protocol-version': MODERN, 'mcp-method': 'notifications/cancelled' },
    );
    expect(response.status).toBe(202);
  });
});
