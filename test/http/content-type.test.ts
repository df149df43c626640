import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** /mcp reads JSON only: any other Content-Type, or none, is 415 with a JSON-RPC error, and nothing runs. */
describe.each(engines)('Content-Type on /mcp on %s', (engine) => {
  let server: TestServer;
  let token: string;
  const subject = `content-type-${Date.now()}`;

  beforeAll(async () => {
    server = await startTestServer({ engine });
    token = await server.token(subject);
  });
  afterAll(async () => {
    await server.close();
  });

  const remember = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'remember', arguments: { text: 'The user sails on Sundays' } } });
  const stored = () => server.service.db.withSubject(subject, 'inspecting rows', (trx) => trx.selectFrom('memories').select('text').execute());

  /** Sends exactly the headers given: a Uint8Array body makes fetch add no Content-Type of its own. */
  const send = (headers: Record<string, string>, body: string = remember) =>
    fetch(server.mcpUrl, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...headers }, body: new TextEncoder().encode(body) });

  it.each([
    ['text/plain', { 'content-type': 'text/plain' }],
    ['text/plain with a charset', { 'content-type': 'text/plain; charset=utf-8' }],
    ['no Content-Type at all', {}],
    ['form-encoded', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['multipart', { 'content-type': 'multipart/form-data; boundary=----x' }],
    ['a JSON look-alike', { 'content-type': 'application/json-patch+json' }],
    ['a list of types', { 'content-type': 'application/json, text/plain' }],
    ['an unparsable header', { 'content-type': ';;;' }],
  ])('answers %s with 415 and a JSON-RPC error, running nothing', async (_name, headers) => {
    const response = await send(headers);
    expect(response.status).toBe(415);
    expect(await response.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Content-Type must be application/json' } });
    expect(await stored()).toEqual([]);
  });

  it('answers 415 to a body-less POST without Content-Type too', async () => {
    const response = await fetch(server.mcpUrl, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(415);
  });

  it.each([
    ['application/json', { 'content-type': 'application/json' }],
    ['with a charset parameter', { 'content-type': 'application/json; charset=utf-8' }],
    ['in capitals', { 'content-type': 'APPLICATION/JSON' }],
    ['mixed case with spaces', { 'content-type': 'Application/Json ; Charset=UTF-8' }],
  ])('accepts %s', async (_name, headers) => {
    const response = await send(headers, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
  });

  it('still answers 413 to an oversized JSON body and 401 to a request without a token', async () => {
    const big = await send({ 'content-type': 'application/json' }, JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping', params: { pad: 'x'.repeat(server.config.http.maxBodyBytes) } }));
    expect(big.status).toBe(413);
    const anonymous = await fetch(server.mcpUrl, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: remember });
    expect(anonymous.status).toBe(401);
  });
});
