import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserStore, usersFilePath } from '../../src/auth/authorization-server/user-store.js';
import { engines } from '../helpers/engines.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { signInWithForms } from '../oauth/oauth-client.js';

const ALICE = { username: 'alice', password: 'correct horse battery staple' };
const MCP_REMOTE = join(dirname(createRequire(import.meta.url).resolve('mcp-remote/package.json')), 'dist', 'proxy.js');

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** mcp-remote as Claude Desktop runs it (a stdio child), driven by the SDK's stdio client; its log is kept. */
class McpRemote {
  readonly log: string[] = [];
  readonly client = new Client({ name: 'stdio-host', version: '1.0.0' });
  readonly #transport: StdioClientTransport;

  constructor(mcpUrl: string, callbackPort: number, configDir: string) {
    this.#transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP_REMOTE, mcpUrl, String(callbackPort)],
      // No browser to open: it says so and waits for the callback, which the test delivers.
      env: { PATH: '/nonexistent', HOME: configDir, MCP_REMOTE_CONFIG_DIR: configDir },
      stderr: 'pipe',
    });
    this.#transport.stderr?.on('data', (chunk: Buffer) => this.log.push(chunk.toString()));
  }

  connect(): Promise<void> {
    return this.client.connect(this.#transport);
  }

  /** Every authorization URL it has printed. */
  printedUrls(): URL[] {
    return [...this.log.join('').matchAll(/Please authorize this client by visiting:\s+(\S+)/g)].map((match) => new URL(match[1]!));
  }

  /** The first authorization URL it prints for a client other than `notFor`. */
  async authorizationUrl(notFor: string | undefined): Promise<URL> {
    for (let waited = 0; waited < 30_000; waited += 100) {
      const url = this.printedUrls().find((candidate) => candidate.searchParams.get('client_id') !== notFor);
      if (url !== undefined) return url;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`mcp-remote printed no authorization URL:\n${this.log.join('')}`);
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

/**
 * mcp-remote 0.15 (the stdio bridge Claude Desktop and others run for remote servers) against the real server:
 * its login through the sign-in forms, and a registration the server has forgotten. mcp-remote checks a stored
 * registration before opening the browser (a GET of the authorization URL asking for JSON); the server answers
 * `invalid_client`, and it registers again instead of sending the person to an error page.
 */
describe.each(engines)('mcp-remote on %s', (engine) => {
  let server: TestServer;
  const configDir = mkdtempSync(join(tmpdir(), 'mcp-remote-'));

  beforeAll(async () => {
    server = await startTestServer({ engine });
    await new UserStore(usersFilePath(server.config.dataDir)).add(ALICE.username, ALICE.password);
  });
  afterAll(async () => {
    await server?.close();
    rmSync(configDir, { recursive: true, force: true });
  });

  /** Starts mcp-remote and, when it asks, plays the person's part; resolves once the host's connect did. */
  const connectSigningIn = async (remote: McpRemote, notFor: string | undefined): Promise<URL> => {
    const connected = remote.connect();
    const url = await remote.authorizationUrl(notFor);
    const callback = await signInWithForms(url, ALICE);
    // The browser would now load the callback: mcp-remote's own server takes the code there.
    expect((await fetch(callback)).status).toBe(200);
    await connected;
    return url;
  };

  it('signs in, then registers again when the server has forgotten its registration', async () => {
    const port = await freePort();
    const first = new McpRemote(server.mcpUrl, port, configDir);
    const firstUrl = await connectSigningIn(first, undefined);
    const firstClient = firstUrl.searchParams.get('client_id')!;
    expect(firstUrl.searchParams.get('redirect_uri')).toBe(`http://localhost:${port}/oauth/callback`);
    const { tools } = await first.client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('brief');
    await first.close();

    // The server forgets the client (an expired or capped registration); mcp-remote still has it on disk, and
    // no tokens (the sign-in never finished, or they were dropped).
    await server.admin(
      `select set_config('memory_service.authorization_server', 'on', false); delete from oauth_objects where kind in ('Client', 'RefreshToken', 'Grant')`,
    );
    const stored = readdirSync(configDir, { recursive: true }).map(String);
    for (const file of stored.filter((name) => name.endsWith('_tokens.json'))) rmSync(join(configDir, file));
    expect(stored.some((name) => name.endsWith('_client_info.json'))).toBe(true);

    const clientInfo = stored.find((name) => name.endsWith('_client_info.json'))!;
    // Undefined between dropping the old registration and writing the new one.
    const storedClient = () => {
      const path = join(configDir, clientInfo);
      return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { client_id: string }).client_id : undefined;
    };

    // It checks the stored registration before sending the person to it, is told invalid_client, and registers
    // again. (0.15.1 then keeps waiting on the sign-in it had started: the new one's URL is suppressed as "already
    // under way", its own bug; a restart uses the new registration.)
    const second = new McpRemote(server.mcpUrl, port, configDir);
    const stalled = second.connect().catch(() => undefined);
    const settled = () => ![undefined, firstClient].includes(storedClient());
    for (let waited = 0; waited < 30_000 && !settled(); waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
    const registeredAgain = storedClient();
    expect(registeredAgain).not.toBe(firstClient);
    expect(second.printedUrls().map((url) => url.searchParams.get('client_id'))).toEqual([firstClient]);
    await second.close();
    await stalled;

    const third = new McpRemote(server.mcpUrl, port, configDir);
    const thirdUrl = await connectSigningIn(third, firstClient);
    expect(thirdUrl.searchParams.get('client_id')).toBe(registeredAgain);
    expect((await third.client.callTool({ name: 'brief', arguments: {} })).isError).toBeFalsy();
    await third.close();
  });

  it('the authorization endpoint answers JSON invalid_client to a client that asks for JSON, a page to a browser', async () => {
    const url = `${server.url}/authorize?client_id=forgotten&response_type=code&redirect_uri=${encodeURIComponent('http://localhost:9/cb')}&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`;
    const json = await fetch(url, { redirect: 'manual', headers: { accept: 'application/json' } });
    expect(json.status).toBe(400);
    expect(await json.json()).toEqual({ error: 'invalid_client', error_description: 'client is invalid' });
    const page = await fetch(url, { redirect: 'manual', headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(page.status).toBe(400);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('Go back to the application and connect again');
  });
});
