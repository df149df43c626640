import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * The request sequences hosted clients send, replayed over raw HTTP exactly as observed: the OpenAI
 * Responses API `mcp` tool, and a connector's first contact (ChatGPT or Claude connectors) before login.
 */
describe.each(engines)('hosted clients on %s', (engine) => {
  let server: TestServer;
  let token: string;

  beforeAll(async () => {
    server = await startTestServer({ engine });
    token = await server.token('hosted-client-user');
  });
  afterAll(async () => {
    await server.close();
  });

  describe('OpenAI Responses API mcp tool', () => {
    const headers = (extra: Record<string, string> = {}) => ({
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      ...extra,
    });
    const post = (body: unknown, extra: Record<string, string> = {}) =>
      fetch(server.mcpUrl, { method: 'POST', headers: headers(extra), body: JSON.stringify(body) });

    it('initialize, initialized, tools/list, DELETE, then tools/call with the stale session id', async () => {
      const init = await post({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'openai-mcp', version: '1.0.0' } },
      });
      expect(init.status).toBe(200);
      const initBody = (await init.json()) as { result: { protocolVersion: string; capabilities: { tools?: object } } };
      expect(initBody.result.protocolVersion).toBe('2025-06-18');
      expect(initBody.result.capabilities.tools).toBeDefined();
      // A stateless server issues no session; the client keeps whatever id it had from an earlier session.
      const session = init.headers.get('mcp-session-id') ?? 'c0ffee00-stale-session-from-earlier-run';
      const after = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };

      const initialized = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, after);
      expect(initialized.status).toBe(202);

      const listed = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, after);
      expect(listed.status).toBe(200);
      const { tools } = ((await listed.json()) as { result: { tools: { name: string }[] } }).result;
      expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['remember', 'recall']));

      // The client ends "its" session; the server has none to end and says so (MCP allows 405 here).
      const ended = await fetch(server.mcpUrl, { method: 'DELETE', headers: headers(after) });
      expect(ended.status).toBe(405);
      expect(ended.headers.get('allow')).toBe('POST');

      const remembered = await post(
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'remember', arguments: { text: 'The user prefers window seats on long flights' } } },
        after,
      );
      expect(remembered.status).toBe(200);
      const stored = ((await remembered.json()) as { result: { isError?: boolean; structuredContent: { ok: boolean; memory_id: number } } }).result;
      expect(stored.isError).toBeFalsy();
      expect(stored.structuredContent.ok).toBe(true);

      const recalled = await post(
        { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'recall', arguments: { query: 'seat preference on flights' } } },
        after,
      );
      expect(recalled.status).toBe(200);
      const found = ((await recalled.json()) as { result: { structuredContent: { memories: { memory_id: number }[] } } }).result;
      expect(found.structuredContent.memories.map((memory) => memory.memory_id)).toContain(stored.structuredContent.memory_id);
    });
  });

  describe("a connector's first contact", () => {
    const origin = 'https://chatgpt.com';

    it('POST without a token gets 401 naming the resource metadata, whose documents lead to the authorization server, with CORS', async () => {
      const first = await fetch(server.mcpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'connector', version: '1' } } }),
      });
      expect(first.status).toBe(401);
      const challenge = first.headers.get('www-authenticate') ?? '';
      expect(challenge).toMatch(/^Bearer /);
      const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
      expect(metadataUrl).toBe(`${server.url}/.well-known/oauth-protected-resource/mcp`);

      const resource = await fetch(metadataUrl!, { headers: { origin } });
      expect(resource.status).toBe(200);
      expect(resource.headers.get('access-control-allow-origin')).toMatch(/^(\*|https:\/\/chatgpt\.com)$/);
      const protectedResource = (await resource.json()) as { resource: string; authorization_servers: string[]; scopes_supported: string[] };
      expect(protectedResource.resource).toBe(server.mcpUrl);
      expect(protectedResource.authorization_servers).toEqual([server.url]);

      // RFC 8414 metadata of the (built-in) authorization server the document names.
      const issuer = protectedResource.authorization_servers[0]!;
      const asMetadata = await fetch(`${issuer}/.well-known/oauth-authorization-server`, { headers: { origin } });
      expect(asMetadata.status).toBe(200);
      expect(asMetadata.headers.get('access-control-allow-origin')).toMatch(/^(\*|https:\/\/chatgpt\.com)$/);
      const as = (await asMetadata.json()) as { issuer: string; authorization_endpoint: string; token_endpoint: string };
      expect(as.issuer).toBe(issuer);
      expect(as.authorization_endpoint).toMatch(new RegExp(`^${issuer}/`));
      expect(as.token_endpoint).toMatch(new RegExp(`^${issuer}/`));
    });
  });
});
