import { Agent, getAllMcpTools, MCPServerStreamableHttp, RunContext, type FunctionTool } from '@openai/agents-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { recordingFetch, type SentRequest } from './lib/recording-fetch.js';

/**
 * The OpenAI Agents SDK (`@openai/agents-core`) as an agent uses it: its own Streamable HTTP MCP server
 * class (built on `@modelcontextprotocol/client` 2.x, negotiating 2026-07-28), its own conversion of the
 * tools' input schemas to strict function-calling schemas (`convertSchemasToStrict`), and tool calls made
 * the way a strict-mode model makes them: every argument present, null for the ones it leaves out.
 */
describe.each(engines)('OpenAI Agents SDK on %s', (engine) => {
  let server: TestServer;
  let mcp: MCPServerStreamableHttp;
  const sent: SentRequest[] = [];
  let tools: Map<string, FunctionTool>;
  const runContext = new RunContext({});

  beforeAll(async () => {
    server = await startTestServer({ engine });
    mcp = new MCPServerStreamableHttp({
      name: 'memory',
      url: server.mcpUrl,
      requestInit: { headers: { authorization: `Bearer ${await server.token('agents-sdk-user')}` } },
      fetch: recordingFetch(sent),
    });
    await mcp.connect();
    const converted = await getAllMcpTools({ mcpServers: [mcp], convertSchemasToStrict: true, runContext, agent: new Agent({ name: 'memory-agent' }) });
    tools = new Map(converted.filter((tool): tool is FunctionTool => tool.type === 'function').map((tool) => [tool.name, tool]));
  });
  afterAll(async () => {
    await mcp?.close();
    await server?.close();
  });

  it('connects over MCP 2026-07-28', () => {
    expect(sent[0]).toEqual({ method: 'server/discover', protocolVersion: '2026-07-28', methodHeader: 'server/discover' });
    expect(sent.map((request) => request.method)).not.toContain('initialize');
    expect(sent.find((request) => request.method === 'tools/list')?.protocolVersion).toBe('2026-07-28');
  });

  it('converts every tool to a strict function schema (the SDK falls back to non-strict when it cannot)', () => {
    expect([...tools.keys()]).toEqual(['remember', 'recall', 'list_memories', 'correct', 'forget', 'confirm', 'brief', 'spaces']);
    for (const [name, tool] of tools) {
      expect(tool.strict, name).toBe(true);
      const parameters = tool.parameters as { properties: Record<string, unknown>; required: string[]; additionalProperties: unknown };
      // Strict mode: every argument is required and nothing else is allowed.
      expect(parameters.required.sort(), name).toEqual(Object.keys(parameters.properties).sort());
      expect(parameters.additionalProperties, name).toBe(false);
    }
  });

  it('answers calls with null for every optional argument, as a strict-mode model sends them', async () => {
    const call = async (name: string, args: Record<string, unknown>) => {
      const tool = tools.get(name)!;
      const parameters = tool.parameters as { properties: Record<string, unknown> };
      const complete = Object.fromEntries(Object.keys(parameters.properties).map((key) => [key, args[key] ?? null]));
      const output = (await tool.invoke(runContext, JSON.stringify(complete), {
        toolCall: { type: 'function_call', callId: `call-${name}`, name, arguments: JSON.stringify(complete) },
      })) as { type: string; text: string };
      const answer = JSON.parse(output.text) as Record<string, unknown> & { ok: boolean; memory_id: number };
      expect(answer.ok, `${name}: ${output.text}`).toBe(true);
      return answer;
    };
    const stored = await call('remember', { text: 'The user grows chillies on the balcony', tags: ['garden'] });
    expect(await call('recall', { query: 'what does the user grow at home' })).toMatchObject({
      memories: [expect.objectContaining({ memory_id: stored.memory_id, tags: ['garden'], importance: 0.5 })],
      cut_by: null,
    });
    expect(await call('list_memories', {})).toMatchObject({ memories: [expect.objectContaining({ memory_id: stored.memory_id })], next_cursor: null });
    await call('confirm', { memory_id: stored.memory_id });
    // tags null keeps the old memory's tags, as documented for correct.
    const corrected = await call('correct', { memory_id: stored.memory_id, text: 'The user grows chillies and basil on the balcony' });
    expect(await call('recall', { query: 'balcony plants' })).toMatchObject({ memories: [expect.objectContaining({ memory_id: corrected.memory_id, tags: ['garden'] })] });
    await call('forget', { memory_id: corrected.memory_id });
    expect(await call('list_memories', {})).toMatchObject({ memories: [] });
  });
});
