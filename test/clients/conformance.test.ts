import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/engines.js';
import { freePort, startTestServer, type TestServer } from '../helpers/test-server.js';
import { startAuthProxy, type AuthProxy } from './lib/auth-proxy.js';
import { CONFORMANCE_CLI, NODE22, requireClientRuntime } from './lib/client-runtime.js';
import { runNode } from './lib/run.js';

/** The `server` scenarios that apply to a tools-only server over stateless HTTP. */
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'] as const;

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

describe.each(engines)('MCP conformance suite (@modelcontextprotocol/conformance) on %s', (engine) => {
  let server: TestServer;
  let proxy: AuthProxy;
  let outDir: string;

  beforeAll(async () => {
    requireClientRuntime();
    // The suite cannot send a token: it talks to a loopback proxy that adds one. The proxy is the service's
    // public address (BaseUrl), as a reverse proxy would be, and passes Host and Origin through.
    const proxyPort = await freePort();
    server = await startTestServer({ engine, env: { MEMORY_SERVICE_BASE_URL: `http://127.0.0.1:${proxyPort}` } });
    proxy = await startAuthProxy({ port: server.config.port }, await server.token('conformance-suite'), proxyPort);
    outDir = mkdtempSync(join(tmpdir(), 'conformance-'));
  });
  afterAll(async () => {
    await proxy?.close();
    await server?.close();
    if (outDir !== undefined) rmSync(outDir, { recursive: true, force: true });
  });

  it.each(SCENARIOS)('passes %s', async (scenario) => {
    const out = join(outDir, scenario);
    const run = await runNode(NODE22, [CONFORMANCE_CLI, 'server', '--url', `${proxy.url}/mcp`, '--scenario', scenario, '-o', out]);
    const [resultDir] = readdirSync(out);
    const checks = JSON.parse(readFileSync(join(out, resultDir!, 'checks.json'), 'utf8')) as Check[];
    const failed = checks.filter((check) => check.status === 'FAILURE' || check.status === 'WARNING');
    expect(failed, `${run.stdout}\n${run.stderr}`).toEqual([]);
    expect(checks.filter((check) => check.status === 'SUCCESS').length).toBeGreaterThan(0);
    expect(run.code, run.stdout).toBe(0);
  });

  it('went through the proxy (the suite really reached the service)', () => {
    expect(proxy.seen.filter((method) => method === 'POST').length).toBeGreaterThanOrEqual(SCENARIOS.length);
  });
});
