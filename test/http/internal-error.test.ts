import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { engines } from '../helpers/engines.js';
import { embedderFailingWhen } from '../helpers/shared.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * A bug (anything but a ServiceError) is not a tool failure and not a database failure: the request answers
 * HTTP 500 with JSON-RPC -32603 "Internal error", and the log says what kind of error and where, without the
 * memory text the request carried or the error quoted.
 */
describe.each(engines)('an internal error on %s', (engine) => {
  let server: TestServer;
  const chunks: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({
      engine,
      logger: createLogger('info', { write: (chunk: string) => void chunks.push(chunk) }),
      // A provider with a bug of its own (not an EMBEDDING_ERROR) for one text.
      embedder: embedderFailingWhen((texts) =>
        texts.some((text) => text.includes('doormat')) ? new RangeError(`Invalid array length while embedding "${texts[0]}"`) : undefined,
      ),
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it('answers 500 -32603 and logs the error without memory text', async () => {
    const token = await server.token('internal-error-user');
    const response = await server.post(
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'remember', arguments: { text: 'The spare key is under the doormat' } } },
      { authorization: `Bearer ${token}` },
    );
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } });
    const lines = chunks.join('').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { msg: string; err?: { type: string; stack: string } });
    const logged = lines.find((line) => line.msg === 'unhandled error on /mcp');
    expect(logged?.err?.type).toBe('RangeError');
    expect(logged?.err?.stack).toMatch(/^\s+at /);
    expect(chunks.join('')).not.toContain('doormat');
    // Nothing was stored, and the server carries on.
    expect((await server.call(token, 'list_memories', {})).structured).toMatchObject({ ok: true, memories: [] });
  });
});
