import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { engines, TEST_DATABASE_URL, uniqueSchema } from '../helpers/engines.js';
import { cliArgs } from '../helpers/cli-command.js';
import { freePort } from '../helpers/test-server.js';

function cliEnv(engine: string, dataDir: string, port: number, schema: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: dataDir,
    MEMORY_SERVICE_DATA_DIR: dataDir,
    MEMORY_SERVICE_PORT: String(port),
    MEMORY_SERVICE_LOG_LEVEL: 'info',
    MEMORY_SERVICE_DATABASE_SCHEMA: schema,
    ...(engine === 'postgres' ? { MEMORY_SERVICE_DATABASE_URL: TEST_DATABASE_URL } : {}),
  };
}

async function waitForHealthy(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 150_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited early (${child.exitCode}):\n${output()}`);
    const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the server did not become healthy:\n${output()}`);
}

/** A POST whose body arrives in two parts: the request is in flight between `start()` and `finish()`. */
function slowPost(port: number, token: string, body: string) {
  const bytes = Buffer.from(body);
  const req = request({
    host: '127.0.0.1',
    port,
    path: '/mcp',
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': bytes.length, authorization: `Bearer ${token}` },
  });
  const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
  });
  // Awaited by finish(); until then a refused connection (a failed test) must not be an unhandled rejection.
  response.catch(() => undefined);
  return {
    start: () => new Promise<void>((resolve) => req.write(bytes.subarray(0, 20), () => resolve())),
    finish: () => {
      req.end(bytes.subarray(20));
      return response;
    },
  };
}

describe.each(engines)('graceful shutdown of the real process on %s', (engine) => {
  let child: ChildProcess | undefined;
  let dataDir: string | undefined;
  let schema: string | undefined;

  afterEach(async () => {
    if (child !== undefined && child.exitCode === null) child.kill('SIGKILL');
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
    if (engine === 'postgres' && schema !== undefined) {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(`drop schema if exists "${schema}" cascade`);
      await client.end();
    }
  });

  it('drains the in-flight request on SIGTERM, refuses new connections, and exits 0', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'memory-shutdown-'));
    schema = uniqueSchema();
    const port = await freePort();
    const env = cliEnv(engine, dataDir, port, schema);
    const url = `http://127.0.0.1:${port}`;

    let output = '';
    const server = spawn(process.execPath, cliArgs('serve'), { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child = server;
    server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
    await waitForHealthy(url, server, () => output);

    // The operator's way to get a token: the CLI, against the same state file.
    const token = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, cliArgs('token', 'issue', '--sub', 'shutdown-user'), { env }, (error, stdout) =>
        error === null ? resolve(stdout.trim().split('\n').pop()!) : reject(error),
      ),
    );

    const inFlight = slowPost(
      port,
      token,
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'remember', arguments: { text: 'The user was mid-sentence when the server restarted' } } }),
    );
    await inFlight.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    server.kill('SIGTERM');

    // Soon not accepting connections any more, but still alive for the request it has.
    let refused = false;
    for (let i = 0; i < 150 && !refused; i++) {
      refused = await fetch(`${url}/healthz`).then(() => false, () => true);
      if (!refused) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(refused).toBe(true);
    expect(server.exitCode).toBeNull();

    const answered = await inFlight.finish();
    expect(answered.status).toBe(200);
    const body = JSON.parse(answered.text) as { result: { isError?: boolean; structuredContent: { ok: boolean; memory_id: number } } };
    expect(body.result.isError).toBeFalsy();
    expect(body.result.structuredContent).toMatchObject({ ok: true, memory_id: expect.any(Number) });

    expect(await exited).toBe(0);
    expect(output).toMatch(/"msg":"shutting down: draining in-flight requests"/);
    // The in-flight request's access line, among the last lines written (asynchronously) before the exit, is there.
    expect(output).toMatch(/"rpc":\{"method":"tools\/call","tool":"remember"\},"res":\{"statusCode":200\},"responseTime":[\d.]+,"msg":"request completed"/);
  }, 240_000);
});
