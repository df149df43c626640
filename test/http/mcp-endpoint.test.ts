import { rmSync, writeFileSync } from 'node:fs';
import { SignJWT, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const rpc = (method: string, params: Record<string, unknown> = {}, id: number | string = 1) => ({ jsonrpc: '2.0', id, method, params });

describe.each(engines)('POST /mcp on %s', (engine) => {
  let server: TestServer;
  let token: string;

  beforeAll(async () => {
    server = await startTestServer({ engine });
    token = await server.token('alice');
  });
  afterAll(async () => {
    await server.close();
  });

  const auth = () => ({ authorization: `Bearer ${token}` });

  it('answers initialize with server info through the official MCP client', async () => {
    const client = await server.client(token);
    expect(client.getServerVersion()).toMatchObject({ name: 'memory-service' });
    expect(client.getServerCapabilities()).toHaveProperty('tools');
    expect(client.getInstructions()).toMatch(/recall/);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['remember', 'recall']));
    const remember = tools.find((tool) => tool.name === 'remember')!;
    expect(remember.inputSchema.required).toEqual(['text']);
    expect(Object.keys(remember.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['text', 'tags', 'source_provider', 'importance', 'capture_mode', 'session_id', 'dedup_policy', 'expires_at', 'last_confirmed_at']),
    );
    expect(remember.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    const result = await client.callTool({ name: 'remember', arguments: { text: 'The user enjoys hiking in the Alps' } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ ok: true, message: expect.any(String) });
    expect(Number.isInteger((result.structuredContent as { memory_id: number }).memory_id)).toBe(true);
    await client.close();
  });

  it('negotiates the protocol version', async () => {
    for (const [asked, expected] of [
      ['2025-06-18', '2025-06-18'],
      ['2025-03-26', '2025-03-26'],
      ['2025-11-25', '2025-11-25'],
      ['2024-11-05', '2025-11-25'],
      [undefined, '2025-11-25'],
    ] as const) {
      const response = await server.post(rpc('initialize', asked === undefined ? {} : { protocolVersion: asked }), auth());
      expect(response.status).toBe(200);
      const body = (await response.json()) as { result: { protocolVersion: string; serverInfo: { name: string; version: string } } };
      expect(body.result.protocolVersion).toBe(expected);
      expect(body.result.serverInfo.version).toMatch(/^\d+\.\d+\.\d+/);
    }
  });

  it('never issues an Mcp-Session-Id and accepts a stale one', async () => {
    const init = await server.post(rpc('initialize'), auth());
    expect(init.headers.get('mcp-session-id')).toBeNull();
    const listed = await server.post(rpc('tools/list'), { ...auth(), 'mcp-session-id': 'stale-session-from-yesterday' });
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { result: { tools: unknown[] } }).result.tools.length).toBeGreaterThanOrEqual(2);
  });

  it('answers ping with an empty object and notifications with 202', async () => {
    const ping = await server.post(rpc('ping', {}, 'abc'), auth());
    expect(await ping.json()).toEqual({ jsonrpc: '2.0', id: 'abc', result: {} });
    for (const method of ['notifications/initialized', 'notifications/cancelled', 'notifications/whatever']) {
      const response = await server.post({ jsonrpc: '2.0', method }, auth());
      expect(response.status).toBe(202);
      expect(await response.text()).toBe('');
    }
  });

  it('maps protocol failures to JSON-RPC error codes', async () => {
    const cases: [unknown, number][] = [
      ['{"jsonrpc":"2.0",', -32700],
      [[rpc('ping')], -32600],
      [{ jsonrpc: '1.0', id: 1, method: 'ping' }, -32600],
      [{ jsonrpc: '2.0', id: 1, method: 'ping', params: [1, 2] }, -32600],
      [rpc('no/such/method'), -32601],
      [rpc('tools/call', { name: 'no_such_tool', arguments: {} }), -32602],
      [rpc('tools/call', { arguments: {} }), -32602],
      [rpc('tools/call', { name: 'remember', arguments: 'text' }), -32602],
    ];
    for (const [body, code] of cases) {
      const response = await server.post(body, auth());
      const json = (await response.json()) as { error: { code: number; message: string } };
      expect(json.error.code, JSON.stringify(body)).toBe(code);
      expect(json.error.message.length).toBeGreaterThan(0);
    }
  });

  it('returns a tool failure as a result with isError and a coded error', async () => {
    const { isError, structured } = await server.call(token, 'remember', { text: '   ' });
    expect(isError).toBe(true);
    expect(structured).toEqual({ ok: false, error: { code: 'INVALID_INPUT', message: expect.stringMatching(/^text: /) } });
  });

  it('refuses GET and DELETE with 405 once the caller is known, and challenges them with 401 before', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(server.mcpUrl, { method, headers: auth() });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      // mcp-remote and others probe with GET first: the challenge is what starts their login.
      const anonymous = await fetch(server.mcpUrl, { method, headers: { accept: 'text/event-stream' } });
      expect(anonymous.status, method).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toBe(
        `Bearer scope="memory:read memory:write", resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp"`,
      );
    }
  });

  it('refuses a foreign Origin with 403 and accepts its own', async () => {
    const foreign = await server.post(rpc('ping'), { ...auth(), origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    const own = await server.post(rpc('ping'), { ...auth(), origin: new URL(server.url).origin });
    expect(own.status).toBe(200);
  });

  it('refuses an oversized body with 413 and a JSON-RPC error', async () => {
    const huge = JSON.stringify(rpc('tools/call', { name: 'remember', arguments: { text: 'x'.repeat(server.config.http.maxBodyBytes) } }));
    const response = await server.post(huge, auth());
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32600);
  });

  it('challenges a request without a token with 401, the scopes to ask for and resource_metadata', async () => {
    const response = await server.post(rpc('initialize'));
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer scope="memory:read memory:write", resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp"`,
    );
    const metadata = await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`);
    expect(await metadata.json()).toMatchObject({
      resource: server.mcpUrl,
      authorization_servers: [server.url],
      scopes_supported: ['memory:read', 'memory:write'],
      bearer_methods_supported: ['header'],
    });
  });

  it('names the reason a token is refused', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const sign = (claims: { iss?: string; aud?: string; exp?: number }, kid = 'foreign-key') =>
      new SignJWT({ scope: 'memory:read memory:write' })
        .setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' })
        .setIssuer(claims.iss ?? server.url)
        .setAudience(claims.aud ?? server.mcpUrl)
        .setSubject('mallory')
        .setIssuedAt()
        .setExpirationTime(claims.exp ?? Math.floor(Date.now() / 1000) + 600)
        .sign(privateKey);
    const realKid = (await server.service.stateFile!.current()).signingKey.kid;
    const cases: [string, RegExp][] = [
      ['not-a-jwt', /malformed/],
      [await sign({ iss: 'https://staging.example.com' }), /issuer does not match: expected 'http:\/\/127\.0\.0\.1:\d+', got 'https:\/\/staging\.example\.com'/],
      [await sign({}), /unknown signing key/],
      [await sign({}, realKid), /bad signature/],
      [token.slice(0, -4) + (token.endsWith('AAAA') ? 'BBBB' : 'AAAA'), /bad signature|malformed/],
      [await server.token('alice', { ttlSeconds: -120 }), /expired/],
    ];
    for (const [candidate, description] of cases) {
      const response = await server.post(rpc('initialize'), { authorization: `Bearer ${candidate}` });
      expect(response.status).toBe(401);
      const challenge = response.headers.get('www-authenticate')!;
      expect(challenge).toMatch(/^Bearer error="invalid_token", error_description="[^"]+", scope="memory:read memory:write", resource_metadata="[^"]+"$/);
      expect(challenge).toMatch(description);
      expect(challenge).not.toContain(candidate);
    }
  });

  it('refuses a token for another audience', async () => {
    const { issueAccessToken } = await import('../../src/auth/authorization-server/access-token.js');
    const other = await issueAccessToken(server.service.stateFile!, {
      issuer: server.url,
      audience: 'https://other.example/mcp',
      subject: 'alice',
      scope: 'memory:read',
      ttlSeconds: 60,
    });
    const response = await server.post(rpc('initialize'), { authorization: `Bearer ${other}` });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/audience does not match/);
  });

  it('answers 403 insufficient_scope naming the missing scope and the ones the token holds', async () => {
    const readOnly = await server.token('alice', { scope: 'memory:read' });
    const response = await server.post(rpc('tools/call', { name: 'remember', arguments: { text: 'The user likes jazz' } }), {
      authorization: `Bearer ${readOnly}`,
    });
    expect(response.status).toBe(403);
    // A client that replaces its scopes with the challenge's keeps memory:read.
    expect(response.headers.get('www-authenticate')).toMatch(
      /^Bearer error="insufficient_scope", error_description="this call needs the 'memory:write' scope", scope="memory:read memory:write", resource_metadata="[^"]+"$/,
    );
    const listed = await server.call(readOnly, 'list_memories', {});
    expect(listed.isError).toBe(false);
    expect(JSON.stringify(listed.structured)).not.toContain('jazz');

    const challenge = async (scope: string, tool: string, args: Record<string, unknown>) => {
      const token = await server.token('alice', { scope });
      const refused = await server.post(rpc('tools/call', { name: tool, arguments: args }), { authorization: `Bearer ${token}` });
      expect(refused.status).toBe(403);
      return /scope="([^"]*)"/.exec(refused.headers.get('www-authenticate') ?? '')?.[1];
    };
    expect(await challenge('memory:write', 'recall', { query: 'music' })).toBe('memory:read memory:write');
    expect(await challenge('openid profile', 'list_memories', {})).toBe('memory:read');
    expect(await challenge('openid', 'forget', { memory_id: 1 })).toBe('memory:write');
  });
});

describe.each(engines)('authorization server state on %s', (engine) => {
  it('invalidates every earlier token when the state file is deleted or overwritten', async () => {
    const server = await startTestServer({ engine });
    try {
      const before = await server.token('alice');
      expect((await server.post(rpc('initialize'), { authorization: `Bearer ${before}` })).status).toBe(200);

      rmSync(server.config.oauth.asIniFile);
      const afterDelete = await server.post(rpc('initialize'), { authorization: `Bearer ${before}` });
      expect(afterDelete.status).toBe(401);
      expect(afterDelete.headers.get('www-authenticate')).toMatch(/unknown signing key/);
      const fresh = await server.token('alice');
      expect((await server.post(rpc('initialize'), { authorization: `Bearer ${fresh}` })).status).toBe(200);

      writeFileSync(server.config.oauth.asIniFile, '; replaced by a redeploy\n');
      expect((await server.post(rpc('initialize'), { authorization: `Bearer ${fresh}` })).status).toBe(401);
    } finally {
      await server.close();
    }
  });

  it('keeps tokens valid across a restart with the state file intact', async () => {
    const first = await startTestServer({ engine });
    const token = await first.token('alice');
    await first.close({ keepData: true });
    const second = await startTestServer({ engine, dataDir: first.dataDir, schema: first.schema, port: first.config.port });
    try {
      expect((await second.post(rpc('initialize'), { authorization: `Bearer ${token}` })).status).toBe(200);
    } finally {
      await second.close();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });
});

describe.each(engines)('unconfigured resource server on %s', (engine) => {
  it('answers 500 "OAuth resource-server is not configured." when the file does not set OAuthAuthorizationServer', async () => {
    const server = await startTestServer({ engine, iniFile: 'LogLevel = warn\n' });
    try {
      for (const headers of [{}, { authorization: "Bearer anything" }] as Record<string, string>[]) {
        const response = await server.post(rpc('initialize'), headers);
        expect(response.status).toBe(500);
        expect(((await response.json()) as { error: { message: string } }).error.message).toBe('OAuth resource-server is not configured.');
      }
    } finally {
      await server.close();
    }
  });
});
