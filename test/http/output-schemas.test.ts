import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { runWireScenario, type RecordedCall } from '../helpers/wire-scenario.js';

/**
 * Every tool publishes an outputSchema in tools/list (MCP 2025-06-18 and later), and every structuredContent
 * the tools answer with (each success shape, each error code) validates against it, checked by a real JSON
 * Schema 2020-12 validator and by the official MCP client, which refuses a result its schema does not admit.
 */
interface ListedTool {
  name: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: { type?: unknown; oneOf?: { properties: { ok: { const: boolean }; error?: { properties: { code: { enum: string[] } } } } }[] };
}

/** Every `type` keyword in a schema, with where it is. */
function typeKeywords(node: unknown, path = ''): [string, unknown][] {
  if (typeof node !== 'object' || node === null) return [];
  return Object.entries(node).flatMap(([key, value]) => [
    ...(key === 'type' && (typeof value === 'string' || Array.isArray(value)) ? [[path, value] as [string, unknown]] : []),
    ...typeKeywords(value, `${path}/${key}`),
  ]);
}

describe.each(engines)('tool output schemas on %s', (engine) => {
  let server: TestServer;
  let tools: ListedTool[];
  let calls: RecordedCall[];
  const validators = new Map<string, ValidateFunction>();

  beforeAll(async () => {
    server = await startTestServer({ engine });
    const token = await server.token('schema-reader');
    const response = await server.post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, { authorization: `Bearer ${token}` });
    tools = ((await response.json()) as { result: { tools: ListedTool[] } }).result.tools;
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    // A CommonJS module: its `default` export is the plugin.
    ajvFormats.default(ajv);
    for (const tool of tools) validators.set(tool.name, ajv.compile(tool.outputSchema ?? {}));
    calls = await runWireScenario(engine);
    // The whole wire scenario (about 140 calls over HTTP) on a loaded machine.
  }, 300_000);
  afterAll(async () => {
    await server.close();
  });

  it('publishes an object outputSchema for every tool: a success shape and the error codes it can return', () => {
    expect(tools.map((tool) => tool.name).sort()).toEqual(['brief', 'confirm', 'correct', 'forget', 'list_memories', 'recall', 'remember', 'spaces']);
    for (const tool of tools) {
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      const branches = tool.outputSchema?.oneOf ?? [];
      expect(branches.map((branch) => branch.properties.ok.const), tool.name).toEqual([true, false]);
    }
  });

  it('publishes input and output schemas that are valid JSON Schema 2020-12, with one type per node', () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    ajvFormats.default(ajv);
    for (const tool of tools) {
      for (const [which, schema] of [['inputSchema', tool.inputSchema], ['outputSchema', tool.outputSchema]] as const) {
        expect(ajv.validateSchema(schema ?? {}), `${tool.name} ${which}: ${JSON.stringify(ajv.errors)}`).toBe(true);
        // Strict mode also refuses unknown keywords and ambiguous types, which the meta-schema allows.
        expect(() => ajv.compile(schema ?? {}), `${tool.name} ${which}`).not.toThrow();
        // A type array is valid, but clients that map schemas onto a single-type dialect cannot read it.
        const arrays = typeKeywords(schema).filter(([, type]) => Array.isArray(type));
        expect(arrays, `${tool.name} ${which}`).toEqual([]);
      }
    }
  });

  it('admits every structuredContent the tools answer with, success and error', () => {
    for (const call of calls) {
      const validate = validators.get(call.tool)!;
      const valid = validate(call.result.structuredContent);
      expect(valid, `${call.step}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it('declares exactly the error codes each tool was seen to return', () => {
    for (const tool of tools) {
      const declared = tool.outputSchema?.oneOf?.[1]?.properties.error?.properties.code.enum ?? [];
      const seen = new Set(
        calls
          .filter((call) => call.tool === tool.name && call.result.isError === true)
          .map((call) => (call.result.structuredContent.error as { code: string }).code),
      );
      expect([...seen].sort(), tool.name).toEqual([...declared].sort());
    }
  });

  it('refuses a structuredContent with a field too many or of the wrong type', () => {
    const remember = validators.get('remember')!;
    const stored = calls.find((call) => call.tool === 'remember' && call.result.isError !== true)!.result.structuredContent;
    expect(remember(stored)).toBe(true);
    expect(remember({ ...stored, extra: 1 })).toBe(false);
    expect(remember({ ...stored, memory_id: String(stored.memory_id) })).toBe(false);
    expect(remember({ ok: false, error: { code: 'NO_SUCH_CODE', message: 'no tool answers this' } })).toBe(false);
  });

  it('passes the official MCP client\'s own output validation for every tool', async () => {
    const client = await server.client(await server.token('sdk-validated'));
    try {
      await client.listTools();
      const call = async (name: string, args: Record<string, unknown>) => {
        const result = await client.callTool({ name, arguments: args });
        return result.structuredContent as Record<string, unknown>;
      };
      const first = await call('remember', { text: 'The user collects fountain pens', tags: ['hobby'] });
      await call('remember', { text: 'The user collects fountain pens' });
      await call('recall', { query: 'fountain pens', limit: 1 });
      await call('list_memories', { limit: 1 });
      await call('confirm', { memory_id: first.memory_id });
      await call('brief', {});
      const corrected = await call('correct', { memory_id: first.memory_id, text: 'The user collects fountain pens and inks', reason: 'more precise' });
      await call('forget', { memory_id: corrected.memory_id });
      // A tool error is a result too, and its structuredContent is validated like a success.
      expect(await call('forget', { memory_id: corrected.memory_id })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    } finally {
      await client.close();
    }
  });
});
