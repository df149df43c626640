import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2, type VersionNegotiationOptions } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { recordingFetch, type SentRequest } from './lib/recording-fetch.js';

/**
 * The official TypeScript SDK clients against the service, in one suite: 1.x (`@modelcontextprotocol/sdk`,
 * 2025 revisions only) and 2.x (`@modelcontextprotocol/client`), which speaks 2026-07-28 when asked to
 * negotiate (`auto`, as the OpenAI Agents SDK configures it, or pinned) and 2025-11-25 by default.
 */
interface ClientUnderTest {
  readonly label: string;
  readonly negotiates: string;
  /** The first request the client sends: the 2026 probe, or the 2025 handshake. */
  readonly opensWith: 'server/discover' | 'initialize';
  connect(server: TestServer, token: string, fetch: typeof globalThis.fetch): Promise<ConnectedClient>;
}

/** What both SDK generations offer, and the version each negotiated. */
interface ConnectedClient {
  readonly protocolVersion: string | undefined;
  readonly serverName: string | undefined;
  readonly instructions: string | undefined;
  listTools(options?: { fresh: boolean }): Promise<{ tools: { name: string }[]; ttlMs?: unknown; cacheScope?: unknown }>;
  callTool(name: string, args: Record<string, unknown>): Promise<{ isError?: boolean | undefined; structuredContent?: unknown }>;
  close(): Promise<void>;
}

const requestInit = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

function v2(label: string, versionNegotiation: VersionNegotiationOptions | undefined, negotiates: string): ClientUnderTest {
  return {
    label,
    negotiates,
    opensWith: versionNegotiation === undefined ? 'initialize' : 'server/discover',
    async connect(server, token, fetch) {
      const client = new ClientV2({ name: 'memory-service-tests', version: '1.0.0' }, versionNegotiation === undefined ? {} : { versionNegotiation });
      await client.connect(new TransportV2(new URL(server.mcpUrl), { requestInit: requestInit(token), fetch }));
      return {
        protocolVersion: client.getNegotiatedProtocolVersion(),
        serverName: client.getServerVersion()?.name,
        instructions: client.getInstructions(),
        listTools: (options) => client.listTools(undefined, options?.fresh === true ? { cacheMode: 'bypass' } : {}),
        callTool: (name, args) => client.callTool({ name, arguments: args }),
        close: () => client.close(),
      };
    },
  };
}

const CLIENTS: readonly ClientUnderTest[] = [
  {
    label: 'SDK 1.x',
    negotiates: '2025-11-25',
    opensWith: 'initialize',
    async connect(server, token, fetch) {
      const client = new ClientV1({ name: 'memory-service-tests', version: '1.0.0' });
      const transport = new TransportV1(new URL(server.mcpUrl), { requestInit: requestInit(token), fetch });
      await client.connect(transport);
      return {
        protocolVersion: transport.protocolVersion,
        serverName: client.getServerVersion()?.name,
        instructions: client.getInstructions(),
        listTools: () => client.listTools(),
        async callTool(name, args) {
          // 1.x types its answer as a union with the pre-2025 `toolResult` shape, which this server never sends.
          const result = await client.callTool({ name, arguments: args });
          return { isError: result.isError === true, structuredContent: result.structuredContent };
        },
        close: () => client.close(),
      };
    },
  },
  v2('SDK 2.x, versionNegotiation auto', { mode: 'auto' }, '2026-07-28'),
  v2('SDK 2.x, pinned to 2026-07-28', { mode: { pin: '2026-07-28' } }, '2026-07-28'),
  v2('SDK 2.x, default negotiation (legacy)', undefined, '2025-11-25'),
];

describe.each(engines)('official MCP SDK clients on %s', (engine) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ engine });
  });
  afterAll(async () => {
    await server.close();
  });

  describe.each(CLIENTS)('$label', (candidate) => {
    const sent: SentRequest[] = [];
    let client: ConnectedClient;

    beforeAll(async () => {
      // Each client its own subject, so that what one stores is not another's near-duplicate.
      client = await candidate.connect(server, await server.token(`sdk ${candidate.label}`), recordingFetch(sent));
    });
    afterAll(async () => {
      await client?.close();
    });

    it(`negotiates ${candidate.negotiates}, opening with ${candidate.opensWith}`, () => {
      expect(client.protocolVersion).toBe(candidate.negotiates);
      expect(sent[0]?.method).toBe(candidate.opensWith);
      expect(client.serverName).toBe('memory-service');
      expect(client.instructions).toMatch(/`recall`/);
      const posts = sent.filter((request) => request.method !== 'GET');
      if (candidate.negotiates === '2026-07-28') {
        // Stateless: no handshake, and every request names its version and method in headers.
        expect(posts.map((request) => request.method)).not.toContain('initialize');
        for (const request of posts) expect(request).toMatchObject({ protocolVersion: '2026-07-28', methodHeader: request.method });
      } else {
        expect(posts.map((request) => request.method)).toContain('notifications/initialized');
      }
    });

    it('lists the eight tools, and a 2026-07-28 client keeps the list as long as its cache hints say', async () => {
      const listed = await client.listTools();
      expect(listed.tools.map((tool) => tool.name)).toEqual(['remember', 'recall', 'list_memories', 'correct', 'forget', 'confirm', 'brief', 'spaces']);
      const listRequests = () => sent.filter((request) => request.method === 'tools/list').length;
      const before = listRequests();
      await client.listTools();
      if (candidate.negotiates === '2026-07-28') {
        expect(listed).toMatchObject({ ttlMs: 3_600_000, cacheScope: 'private' });
        expect(listRequests()).toBe(before);
        await client.listTools({ fresh: true });
        expect(listRequests()).toBe(before + 1);
      } else {
        expect(listed.ttlMs).toBeUndefined();
        expect(listRequests()).toBe(before + 1);
      }
    });

    it('calls every tool, its answers validated against the output schemas by the client', async () => {
      const structured = async (name: string, args: Record<string, unknown>) => {
        const result = await client.callTool(name, args);
        expect(result.isError, `${name} ${JSON.stringify(result.structuredContent)}`).toBeFalsy();
        return result.structuredContent as Record<string, unknown> & { memory_id: number };
      };
      const first = await structured('remember', {
        text: 'The user rows on the river every Saturday at dawn',
        tags: ['Sport', 'weekend'],
        importance: 0.8,
        capture_mode: 'explicit',
        source_provider: candidate.label,
        session_id: 'sdk-session',
        dedup_policy: 'ask',
      });
      const again = await structured('remember', { text: 'The user rows on the river every Saturday at dawn', dedup_policy: 'skip_if_near' });
      expect(again).toMatchObject({ memory_id: first.memory_id, message: 'Already remembered' });
      const recalled = await structured('recall', { query: 'what does the user do on Saturday mornings', tags: ['sport'] });
      expect(recalled.memories).toEqual([expect.objectContaining({ memory_id: first.memory_id, tags: ['sport', 'weekend'] })]);
      const listed = await structured('list_memories', { session_id: 'sdk-session' });
      expect(listed.memories).toEqual([expect.objectContaining({ memory_id: first.memory_id })]);
      await structured('confirm', { memory_id: first.memory_id });
      const corrected = await structured('correct', { memory_id: first.memory_id, text: 'The user rows on the river every Sunday at dawn', reason: 'moved to Sundays' });
      expect(corrected).toMatchObject({ replaced_memory_id: first.memory_id });
      await structured('forget', { memory_id: corrected.memory_id, reason: 'user asked' });
      const gone = await client.callTool('forget', { memory_id: corrected.memory_id });
      expect(gone).toMatchObject({ isError: true, structuredContent: { ok: false, error: { code: 'NOT_FOUND' } } });
    });

    it('gets invalid arguments back as a tool error, and an unknown tool as a protocol error', async () => {
      const refused = await client.callTool('remember', { text: 'The user owns a kayak', importance: 7, colour: 'red' });
      expect(refused).toMatchObject({
        isError: true,
        structuredContent: { ok: false, error: { code: 'INVALID_INPUT', message: 'importance: must be from 0 to 1; unknown argument "colour"' } },
      });
      await expect(client.callTool('no_such_tool', {})).rejects.toMatchObject({ code: -32602 });
    });
  });
});
