import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { INSPECTOR_CLI, NODE22, requireClientRuntime } from './lib/client-runtime.js';
import { runNode } from './lib/run.js';

/** The Inspector CLI's documented exit codes. */
const EXIT = { ok: 0, authRequired: 3, toolError: 5 } as const;

describe.each(engines)('MCP Inspector CLI (@modelcontextprotocol/inspector --cli) on %s', (engine) => {
  let server: TestServer;
  let token: string;
  let home: string;

  beforeAll(async () => {
    requireClientRuntime();
    server = await startTestServer({ engine });
    token = await server.token('inspector-user');
    home = mkdtempSync(join(tmpdir(), 'inspector-home-'));
  });
  afterAll(async () => {
    await server?.close();
    if (home !== undefined) rmSync(home, { recursive: true, force: true });
  });

  // --stored-auth-only: never start an interactive OAuth login (what CI runs use); the header carries the token.
  const inspect = (bearer: string, ...args: string[]) =>
    runNode(NODE22, [INSPECTOR_CLI, '--cli', server.mcpUrl, '--transport', 'http', '--stored-auth-only', '--header', `Authorization: Bearer ${bearer}`, ...args], { cwd: home });

  it('lists the tools, whose schemas its portability check (--strict) finds nothing to warn about', async () => {
    const run = await inspect(token, '--method', 'tools/list', '--strict');
    expect(run.code, run.stderr).toBe(EXIT.ok);
    const { tools } = JSON.parse(run.stdout) as { tools: { name: string; inputSchema: { required?: string[] } }[] };
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['remember', 'recall']));
    expect(tools.find((tool) => tool.name === 'remember')!.inputSchema.required).toEqual(['text']);
    // Findings (warnings included) are printed on stderr as "Warning: tool ..." or a "Schema portability" count.
    expect(run.stderr).not.toMatch(/Warning: tool|Error: tool|Schema portability/);
  });

  it('speaks 2026-07-28 when its server entry sets protocolEra to modern', async () => {
    const config = join(home, 'mcp.json');
    writeFileSync(
      config,
      JSON.stringify({ mcpServers: { memory: { type: 'http', url: server.mcpUrl, protocolEra: 'modern', headers: { Authorization: `Bearer ${token}` } } } }),
    );
    const modern = (...args: string[]) =>
      runNode(NODE22, [INSPECTOR_CLI, '--cli', '--config', config, '--server', 'memory', '--stored-auth-only', ...args], {
        cwd: home,
        env: { MCP_INSPECTOR_SECRET_STORE: 'memory' },
      });
    const connected = await modern('--method', 'initialize');
    expect(connected.code, connected.stderr).toBe(EXIT.ok);
    expect(JSON.parse(connected.stdout)).toMatchObject({ protocolVersion: '2026-07-28', serverInfo: { name: 'memory-service' }, capabilities: { tools: {} } });

    const remembered = await modern('--method', 'tools/call', '--tool-name', 'remember', '--tool-arg', 'text=The user bakes sourdough on Fridays');
    expect(remembered.code, remembered.stderr).toBe(EXIT.ok);
    expect(JSON.parse(remembered.stdout)).toMatchObject({ structuredContent: { ok: true }, _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'memory-service' } } });
    const refused = await modern('--method', 'tools/call', '--tool-name', 'recall', '--tool-args-json', JSON.stringify({ query: 'bread', limit: 0 }));
    expect(refused.code).toBe(EXIT.toolError);
    expect(JSON.parse(refused.stdout)).toMatchObject({ isError: true, structuredContent: { error: { code: 'INVALID_INPUT' } } });
  });

  it('calls remember, then recall finds the memory', async () => {
    const remembered = await inspect(token, '--method', 'tools/call', '--tool-name', 'remember', '--tool-args-json', JSON.stringify({ text: 'The user plays the cello every Sunday morning', tags: ['music'] }));
    expect(remembered.code, remembered.stderr).toBe(EXIT.ok);
    const stored = (JSON.parse(remembered.stdout) as { structuredContent: { ok: boolean; memory_id: number } }).structuredContent;
    expect(stored).toMatchObject({ ok: true, memory_id: expect.any(Number) });

    const recalled = await inspect(token, '--method', 'tools/call', '--tool-name', 'recall', '--tool-arg', 'query=which instrument does the user play');
    expect(recalled.code, recalled.stderr).toBe(EXIT.ok);
    const found = (JSON.parse(recalled.stdout) as { structuredContent: { memories: { memory_id: number; text: string }[] } }).structuredContent;
    expect(found.memories[0]).toMatchObject({ memory_id: stored.memory_id, text: 'The user plays the cello every Sunday morning' });
  });

  it('exits with its auth-required code for a bad token', async () => {
    const run = await inspect('not.a.valid-token', '--method', 'tools/list');
    expect(run.code).toBe(EXIT.authRequired);
    expect(JSON.parse(run.stderr.trim().split('\n').pop()!)).toMatchObject({ error: { code: 'auth_required' } });
  });

  it('exits with its tool-error code when a tool answers isError', async () => {
    const run = await inspect(token, '--method', 'tools/call', '--tool-name', 'remember', '--tool-args-json', JSON.stringify({ text: 'x', importance: 7 }));
    expect(run.code).toBe(EXIT.toolError);
    expect(run.stdout + run.stderr).toContain('INVALID_INPUT');
  });
});
