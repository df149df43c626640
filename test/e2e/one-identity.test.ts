import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { browserSkipReason, launchBrowser } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { dropSchema } from '../helpers/drop-schema.js';
import { engines, TEST_DATABASE_URL, uniqueSchema } from '../helpers/engines.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process.js';
import { freePort } from '../helpers/test-server.js';
import { signInOnPage } from '../helpers/web-page.js';

const skip = browserSkipReason();
if (skip !== undefined) console.warn(skip);

const PASSWORD = 'alice keeps bees on the roof';
const FACT = 'Alice is allergic to penicillin';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** One JSON-RPC call to /mcp as curl would send it: a bearer token, JSON in, JSON out. */
async function rpc(server: ServeProcess, token: string, method: string, params: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${server.address}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { result?: Record<string, unknown>; error?: unknown };
  expect(body.error).toBeUndefined();
  return body.result!;
}

/**
 * The quick start, end to end through the real CLI and server: a person made with `user add alice` and a token
 * from `token issue --user alice` reach the same memories, so what the token remembered is on alice's page.
 */
describe.skipIf(skip !== undefined).each(engines)('one identity for a person, on %s', (engine) => {
  it('user add, token issue --user, remember and recall over /mcp, then the memory on the page after signing in', { timeout: 300_000 }, async () => {
    const home = mkdtempSync(join(tmpdir(), 'memory-identity-'));
    dirs.push(home);
    const schema = uniqueSchema();
    const env: Record<string, string> = {
      HOME: home,
      ...(engine === 'postgres' ? { MEMORY_SERVICE_DATABASE_URL: TEST_DATABASE_URL!, MEMORY_SERVICE_DATABASE_SCHEMA: schema } : {}),
    };
    const port = await freePort();
    // What the quick start types: the same base URL for the token as the server will have.
    const cliEnv = { ...env, MEMORY_SERVICE_PORT: String(port) };

    const added = await runCli(['user', 'add', 'alice'], cliEnv, `${PASSWORD}\n`);
    expect(added.code).toBe(0);
    const id = /id ([0-9a-f-]{36})/.exec(added.stdout)?.[1];
    expect(id).toBeDefined();

    const issued = await runCli(['token', 'issue', '--user', 'alice'], cliEnv);
    expect(issued.stderr).toBe('');
    expect(issued.code).toBe(0);
    const token = issued.stdout.trim();
    expect(decodeJwt(token).sub).toBe(id);

    // The name is not the subject: a token for it would reach none of alice's memories, so it is refused.
    const byName = await runCli(['token', 'issue', '--sub', 'alice'], cliEnv);
    expect(byName.code).toBe(2);
    expect(byName.stdout).toBe('');
    expect(byName.stderr).toContain(`"alice" is the name of a user; the memories they save after signing in belong to their id ${id}. Give --user alice (or --sub ${id})`);
    const byId = await runCli(['token', 'issue', '--sub', id!], cliEnv);
    expect(byId.code).toBe(0);
    expect(decodeJwt(byId.stdout.trim()).sub).toBe(id);

    const server = await startServeProcess(port, env);
    const browser = await launchBrowser();
    try {
      const remembered = await rpc(server, token, 'tools/call', { name: 'remember', arguments: { text: FACT } });
      expect(remembered.isError).toBeFalsy();
      const recalled = await rpc(server, token, 'tools/call', { name: 'recall', arguments: { query: 'Which antibiotic should Alice avoid?' } });
      expect(JSON.stringify(recalled.structuredContent)).toContain(FACT);

      await signInOnPage(browser.page, server.address, { username: 'alice', password: PASSWORD });
      await expect.poll(() => browser.page.textContent('body')).toContain(FACT);
    } finally {
      await browser.close();
      expect(await server.stop()).toBe(0);
      if (engine === 'postgres') await dropSchema(schema, TEST_DATABASE_URL!);
    }
  });
});
