import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

interface BriefMemory {
  memory_id: number;
  text: string;
  tags: string[];
  importance: number;
  recalls: number;
  text_truncated?: true;
}
interface BriefAnswer {
  ok: true;
  groups: { tag: string | null; memories: BriefMemory[] }[];
  shown: number;
  stored: number;
  message: string;
}

const requestInit = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

async function v1Client(server: TestServer, token: string): Promise<ClientV1> {
  const client = new ClientV1({ name: 'brief-v1', version: '1.0.0' });
  await client.connect(new TransportV1(new URL(server.mcpUrl), { requestInit: requestInit(token) }));
  return client;
}

async function v2Client(server: TestServer, token: string, modern: boolean): Promise<ClientV2> {
  const client = new ClientV2({ name: 'brief-v2', version: '1.0.0' }, modern ? { versionNegotiation: { mode: 'auto' } } : {});
  await client.connect(new TransportV2(new URL(server.mcpUrl), { requestInit: requestInit(token) }));
  return client;
}

const memoriesOf = (answer: BriefAnswer) => answer.groups.flatMap((group) => group.memories);

/**
 * The brief at the start of a conversation, through real SDK clients: the `brief` tool (tools/call) and the
 * `brief` prompt (prompts/list, prompts/get), in both SDK generations and both protocol eras.
 */
describe.each(engines)('brief on %s', (engine) => {
  let server: TestServer;
  let writer: ClientV2;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    server = await startTestServer({ engine });
    writer = await v2Client(server, await server.token('brief-alice'), true);
    const facts = [
      { key: 'allergy', text: 'Alice is allergic to penicillin', tags: ['health'], importance: 1 },
      { key: 'daughter', text: 'Alice has a daughter named Maya, born in 2019', tags: ['family'], importance: 0.8 },
      { key: 'tea', text: 'Alice prefers green tea to coffee', tags: ['food'], importance: 0.3 },
      { key: 'editor', text: 'Alice writes code in Neovim with a Colemak keyboard layout', tags: ['work', 'tools'], importance: 0.5 },
      { key: 'job', text: 'Alice works as a structural engineer at a bridge-building firm in Rotterdam', tags: ['work'], importance: 0.7 },
      { key: 'trivia', text: 'Alice once saw a heron on the office roof', tags: [], importance: 0 },
    ];
    for (const fact of facts) {
      const result = await writer.callTool({ name: 'remember', arguments: { text: fact.text, tags: fact.tags, importance: fact.importance } });
      expect(result.isError).toBeFalsy();
      ids[fact.key] = (result.structuredContent as { memory_id: number }).memory_id;
    }
    // Recalled three times: the editor fact becomes one the user's conversations keep needing.
    for (let i = 0; i < 3; i++) {
      const recalled = await writer.callTool({ name: 'recall', arguments: { query: 'Which text editor and keyboard layout does Alice use?', limit: 1 } });
      expect(recalled.isError).toBeFalsy();
    }
  });
  afterAll(async () => {
    await writer?.close();
    await server?.close();
  });

  it('the brief tool: grouped by tag, with ids, importance and recall counts, most important first', async () => {
    const result = await writer.callTool({ name: 'brief', arguments: {} });
    expect(result.isError).toBeFalsy();
    const answer = result.structuredContent as unknown as BriefAnswer;
    expect(answer).toMatchObject({ ok: true, stored: 6, shown: 6 });
    expect(answer.message).toBe('6 memories of 6 stored, the ones that matter most, by tag');
    expect(answer.groups.map((group) => group.tag)).toEqual(['health', 'family', 'work', 'food', null]);
    expect(answer.groups.find((group) => group.tag === 'work')!.memories.map((memory) => memory.memory_id)).toEqual([ids.editor, ids.job]);
    const byId = new Map(memoriesOf(answer).map((memory) => [memory.memory_id, memory]));
    expect(byId.get(ids.editor!)).toMatchObject({ text: 'Alice writes code in Neovim with a Colemak keyboard layout', recalls: 3, tags: ['work', 'tools'] });
    expect(byId.get(ids.allergy!)).toMatchObject({ importance: 1, recalls: 0 });
    // Each call of recall counts: the brief sees the fourth at once.
    await writer.callTool({ name: 'recall', arguments: { query: 'Which text editor and keyboard layout does Alice use?', limit: 1 } });
    const again = (await writer.callTool({ name: 'brief', arguments: {} })).structuredContent as unknown as BriefAnswer;
    expect(memoriesOf(again).find((memory) => memory.memory_id === ids.editor)!.recalls).toBe(4);
  });

  it('keeps within max_chars, dropping what matters least first', async () => {
    const answer = (await writer.callTool({ name: 'brief', arguments: { max_chars: 200 } })).structuredContent as unknown as BriefAnswer;
    const shown = memoriesOf(answer);
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.length).toBeLessThan(6);
    expect(shown.reduce((sum, memory) => sum + memory.text.length + 12, 0)).toBeLessThanOrEqual(200);
    expect(shown.map((memory) => memory.memory_id)).toContain(ids.allergy);
    expect(shown.map((memory) => memory.memory_id)).not.toContain(ids.trivia);
    expect(answer.stored).toBe(6);
  });

  it('a corrected memory is shown in its new wording, a forgotten one is gone', async () => {
    const before = memoriesOf((await writer.callTool({ name: 'brief', arguments: {} })).structuredContent as unknown as BriefAnswer);
    const corrected = await writer.callTool({ name: 'correct', arguments: { memory_id: ids.tea, text: 'Alice now prefers rooibos to green tea' } });
    expect(corrected.isError).toBeFalsy();
    const newTea = (corrected.structuredContent as { memory_id: number }).memory_id;
    expect((await writer.callTool({ name: 'forget', arguments: { memory_id: ids.trivia } })).isError).toBeFalsy();
    const after = memoriesOf((await writer.callTool({ name: 'brief', arguments: {} })).structuredContent as unknown as BriefAnswer);
    expect(after.map((memory) => memory.memory_id)).not.toContain(ids.tea);
    expect(after.map((memory) => memory.memory_id)).not.toContain(ids.trivia);
    expect(after.find((memory) => memory.memory_id === newTea)?.text).toBe('Alice now prefers rooibos to green tea');
    expect(before.length).toBe(6);
  });

  it('validates its input like every tool', async () => {
    const result = await writer.callTool({ name: 'brief', arguments: { max_chars: 5 } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({ ok: false, error: { code: 'INVALID_INPUT', message: 'max_chars: must be an integer from 200 to 10000' } });
  });

  it('SDK 1.x (2025-11-25): prompts capability, instructions name brief, prompts/get returns the brief as text with ids', async () => {
    const client = await v1Client(server, await server.token('brief-alice', { scope: 'memory:read' }));
    expect(client.getServerCapabilities()?.prompts).toEqual({ listChanged: false });
    expect(client.getInstructions()).toMatch(/start of every conversation, call `brief`/);
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'brief')?.description).toMatch(/^Load what is known about the user at the start of every conversation/);
    const { prompts } = await client.listPrompts();
    expect(prompts).toEqual([expect.objectContaining({ name: 'brief', title: 'What you remember about me', arguments: [] })]);
    const prompt = await client.getPrompt({ name: 'brief' });
    expect(prompt.messages).toHaveLength(1);
    const text = (prompt.messages[0]!.content as { type: 'text'; text: string }).text;
    expect(prompt.messages[0]!.role).toBe('user');
    expect(text).toContain(`## health\n- [${ids.allergy}] Alice is allergic to penicillin`);
    expect(text).toContain(`- [${ids.editor}] Alice writes code in Neovim`);
    expect(text).toMatch(/^What the memory service knows about me \(5 memories of 5 stored/);
    await expect(client.getPrompt({ name: 'nonsense' })).rejects.toThrow(/Unknown prompt: nonsense/);
    await expect(client.getPrompt({ name: 'brief', arguments: { max_chars: '10' } })).rejects.toThrow(/takes no arguments/);
    await client.close();
  });

  it('SDK 2.x on 2026-07-28: prompts/list and prompts/get without a handshake', async () => {
    const client = await v2Client(server, await server.token('brief-alice'), true);
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['brief']);
    const prompt = await client.getPrompt({ name: 'brief' });
    expect((prompt.messages[0]!.content as { text: string }).text).toContain(`[${ids.job}] Alice works as a structural engineer`);
    await client.close();
  });

  it('another subject gets only its own brief; an empty one is told so; a token without memory:read is refused', async () => {
    const bob = await v2Client(server, await server.token('brief-bob'), false);
    const answer = (await bob.callTool({ name: 'brief', arguments: {} })).structuredContent as unknown as BriefAnswer;
    expect(answer).toEqual({ ok: true, groups: [], shown: 0, stored: 0, space: { id: 'personal', name: 'Personal' }, message: 'No memories are stored about the user yet' });
    const prompt = await bob.getPrompt({ name: 'brief' });
    expect((prompt.messages[0]!.content as { text: string }).text).toMatch(/^Memory service: nothing is stored about me yet/);
    await bob.close();

    const writeOnly = await server.token('brief-alice', { scope: 'memory:write' });
    const response = await fetch(server.mcpUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${writeOnly}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'prompts/get', params: { name: 'brief' } }),
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('www-authenticate')).toMatch(/error="insufficient_scope"/);
  });
});
