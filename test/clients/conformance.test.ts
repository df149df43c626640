import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines } from '../helpers/engines.js';
import { freePort, startTestServer, type TestServer } from '../helpers/test-server.js';
import { startAuthProxy, type AuthProxy } from './lib/auth-proxy.js';
import { CONFORMANCE_CLI, NODE22, requireClientRuntime } from './lib/client-runtime.js';
import { runNode } from './lib/run.js';

/**
 * The `server` scenarios of the MCP conformance suite that apply to a tools-only server over stateless
 * HTTP, each at every revision it tests that this server speaks. Not run, because they need what a memory
 * server does not have: the suite's fixture tools (`tools-call-*`, `json-schema-2020-12`,
 * `input-required-result-*`, `elicitation-*`), server-to-client requests or SSE streams (`tools-call-sampling`,
 * `tools-call-elicitation`, `server-sse-*`), logging, completions, resources or the suite's fixture prompts
 * (`logging-set-level`, `completion-complete`, `resources-*`, `prompts-*`: the one prompt here is `brief`,
 * tested in test/e2e/brief.test.ts; `sep-2164-resource-not-found`), a tool argument mirrored
 * into an `Mcp-Param-*` header (`http-custom-header-server-validation`: no memory argument belongs in a header
 * that proxies log), or an extension (`tasks-*`, `sep-2640-*`).
 */
interface Run {
  readonly scenario: string;
  readonly version: string;
  /** Checks of an applicable scenario that exercise what this server does not offer, with why. */
  readonly notApplicable?: Readonly<Record<string, string>>;
}

const FIXTURE_TOOL = 'needs a fixture tool of the suite (test_missing_capability, test_streaming_elicitation, test_logging_tool)';
const NO_RESOURCES = 'resources are not offered (-32601), so they have no cache hints';

const RUNS: readonly Run[] = [
  { scenario: 'server-initialize', version: '2025-06-18' },
  { scenario: 'server-initialize', version: '2025-11-25' },
  { scenario: 'ping', version: '2025-11-25' },
  { scenario: 'tools-list', version: '2025-06-18' },
  { scenario: 'tools-list', version: '2025-11-25' },
  { scenario: 'tools-list', version: '2026-07-28' },
  // Only INFO for a stateless server: it issues no session to end.
  { scenario: 'server-session-lifecycle', version: '2025-11-25' },
  { scenario: 'dns-rebinding-protection', version: '2025-11-25' },
  { scenario: 'dns-rebinding-protection', version: '2026-07-28' },
  {
    scenario: 'server-stateless',
    version: '2026-07-28',
    notApplicable: {
      'sep-2575-server-rejects-undeclared-capability': `${FIXTURE_TOOL}; no tool here needs a client capability`,
      'sep-2575-missing-capability-http-400': FIXTURE_TOOL,
      'sep-2575-http-server-no-independent-requests-on-stream': `${FIXTURE_TOOL}; this server answers with JSON, never a stream`,
      'sep-2575-server-no-log-without-loglevel': `${FIXTURE_TOOL}; this server sends no log notifications`,
    },
  },
  {
    scenario: 'caching',
    version: '2026-07-28',
    notApplicable: {
      'sep-2549-resources-list-caching-hints': NO_RESOURCES,
      'sep-2549-resources-templates-list-caching-hints': NO_RESOURCES,
    },
  },
  { scenario: 'http-header-validation', version: '2026-07-28' },
];

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

  it.each(RUNS)('passes $scenario at $version', async ({ scenario, version, notApplicable = {} }) => {
    const out = join(outDir, `${scenario}@${version}`);
    const run = await runNode(NODE22, [CONFORMANCE_CLI, 'server', '--url', `${proxy.url}/mcp`, '--scenario', scenario, '--spec-version', version, '-o', out]);
    const [resultDir] = readdirSync(out);
    const checks = JSON.parse(readFileSync(join(out, resultDir!, 'checks.json'), 'utf8')) as Check[];
    const applicable = checks.filter((check) => !Object.hasOwn(notApplicable, check.id));
    const failed = applicable.filter((check) => check.status === 'FAILURE' || check.status === 'WARNING');
    expect(failed, `${run.stdout}\n${run.stderr}`).toEqual([]);
    expect(applicable.filter((check) => check.status === 'SUCCESS' || check.status === 'INFO').length).toBeGreaterThan(0);
    // The exemptions stay honest: each names a check the suite ran and could not apply here.
    for (const id of Object.keys(notApplicable)) {
      expect(checks.find((check) => check.id === id)?.status, id).toBe('FAILURE');
    }
    if (Object.keys(notApplicable).length === 0) expect(run.code, run.stdout).toBe(0);
  });

  it('went through the proxy (the suite really reached the service)', () => {
    expect(proxy.seen.filter((method) => method === 'POST').length).toBeGreaterThanOrEqual(RUNS.length);
  });
});
