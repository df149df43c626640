import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/** MaxMemoriesPerSubject over the wire: remember answers the QUOTA_EXCEEDED tool error, per subject. */
describe.each(engines)('quota over MCP on %s', (engine) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ engine, env: { MEMORY_SERVICE_MAX_MEMORIES_PER_SUBJECT: '1' } });
  }, 120_000);
  afterAll(() => server?.close());

  it('refuses the memory past the quota with QUOTA_EXCEEDED, stores nothing, and leaves other subjects alone', async () => {
    const alice = await server.token('quota-alice');
    const bob = await server.token('quota-bob');
    expect((await server.call(alice, 'remember', { text: 'Alice keeps one fact.' })).isError).toBe(false);
    const refused = await server.call(alice, 'remember', { text: 'Alice tries a second fact.' });
    expect(refused.isError).toBe(true);
    expect(refused.structured).toMatchObject({ ok: false, error: { code: 'QUOTA_EXCEEDED' } });
    expect(String((refused.structured.error as { message: string }).message)).toContain('MaxMemoriesPerSubject');
    const listed = await server.call(alice, 'list_memories', {});
    expect((listed.structured.memories as { text: string }[]).map((memory) => memory.text)).toEqual(['Alice keeps one fact.']);
    expect((await server.call(bob, 'remember', { text: 'Bob has his own room.' })).isError).toBe(false);
  });
});
