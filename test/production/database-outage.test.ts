import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAULT_TESTS_REQUIRED, faultTestsUnavailable, startOwnPostgres, type OwnPostgres } from '../helpers/own-postgres.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { subjectCountMismatchesSql } from '../helpers/stored-counts.js';
import { acknowledged, refused, startTraffic, type CallRecord } from '../helpers/traffic.js';

/**
 * PostgreSQL goes away while clients write and read: stopped (`pg_ctl stop -m fast`, what a restart or failover
 * does) and started again, and the service's backends terminated (`pg_terminate_backend`). The process stays
 * up, every call answers within a few seconds (DATABASE_ERROR while the database is gone), /readyz says not
 * ready while /healthz stays 200, the same process serves again once the database is back, and the table holds
 * every acknowledged memory and none that was refused. On a cluster of the test's own: the shared one must
 * never stop.
 */
const unavailable = faultTestsUnavailable({ postgres: true });
const CALL_BOUND_MS = 5_000;

describe.skipIf(unavailable !== undefined && !FAULT_TESTS_REQUIRED)('a database outage (own PostgreSQL cluster)', () => {
  let cluster: OwnPostgres | undefined;
  let server: TestServer;
  let tokens: string[];

  beforeAll(async () => {
    if (unavailable !== undefined) throw new Error(`MEMORY_SERVICE_TEST_FAULTS=1 but the fault tests cannot run here: ${unavailable}`);
    cluster = await startOwnPostgres();
    server = await startTestServer({ engine: 'postgres', databaseUrl: cluster.url });
    tokens = await Promise.all(['ada', 'bob', 'cy', 'dee'].map((subject) => server.token(subject)));
  });
  afterAll(async () => {
    // The schema goes with the cluster.
    await server?.close({ keepData: true }).catch(() => undefined);
    if (server !== undefined) rmSync(server.dataDir, { recursive: true, force: true });
    await cluster?.remove();
  });

  const storedTexts = async (): Promise<Map<number, string>> => {
    const rows = await cluster!.admin<{ id: string; text: string }>(`select id, text from "${server.schema}".memories`);
    return new Map(rows.map((row) => [Number(row.id), row.text]));
  };

  /** Every acknowledged memory is stored with its text; no refused one is. */
  const expectConsistent = async (calls: readonly CallRecord[]) => {
    const stored = await storedTexts();
    for (const call of acknowledged(calls)) expect(stored.get(call.memoryId!), `memory ${call.memoryId}`).toBe(call.text);
    const storedSet = new Set(stored.values());
    for (const call of refused(calls)) expect(storedSet.has(call.text), `refused "${call.text}" is stored`).toBe(false);
    // Every failure is the database's, said as such.
    const errors = new Set(calls.filter((c) => c.error !== undefined).map((c) => c.error));
    expect([...errors].filter((e) => e !== 'DATABASE_ERROR')).toEqual([]);
  };

  const waitFor = async (condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<number> => {
    const started = Date.now();
    while (!(await condition())) {
      if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return Date.now() - started;
  };

  it('answers DATABASE_ERROR within seconds while PostgreSQL is stopped, and serves again when it is back', async () => {
    const traffic = startTraffic({ mcpUrl: server.mcpUrl, tokens, label: 'restart' });
    await waitFor(() => acknowledged(traffic.calls).length >= 8, 30_000);

    const stoppedAt = Date.now();
    await cluster!.stop('fast');
    const firstError = await waitFor(() => traffic.calls.some((c) => c.error === 'DATABASE_ERROR' && c.endedAt >= stoppedAt), CALL_BOUND_MS);

    // While it is down: the process answers, readiness says the database is gone, liveness stays up.
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'not_ready', checks: { database: false, embeddings: true } });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    const startedAt = Date.now();
    await cluster!.start();
    const recovered = await waitFor(() => traffic.calls.some((c) => c.tool === 'remember' && c.memoryId !== undefined && c.startedAt >= startedAt), 15_000);
    const calls = await traffic.stop();

    const duringOutage = calls.filter((c) => c.startedAt >= stoppedAt && c.endedAt <= startedAt);
    expect(duringOutage.length).toBeGreaterThan(0);
    expect(duringOutage.every((c) => c.error === 'DATABASE_ERROR')).toBe(true);
    expect(Math.max(...calls.map((c) => c.endedAt - c.startedAt))).toBeLessThan(CALL_BOUND_MS);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    await expectConsistent(calls);
    console.info(`database stopped: first DATABASE_ERROR after ${firstError} ms; serving again ${recovered} ms after the start returned`);
  });

  it('reports transactions on terminated backends as DATABASE_ERROR, half-applies nothing, and carries on', async () => {
    const traffic = startTraffic({ mcpUrl: server.mcpUrl, tokens, label: 'terminate' });
    let terminated = 0;
    for (let round = 0; round < 6; round++) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      terminated += await cluster!.terminateServiceBackends();
    }
    const before = acknowledged(traffic.calls).length;
    await waitFor(() => acknowledged(traffic.calls).length >= before + 4, 15_000);
    const calls = await traffic.stop();
    expect(terminated).toBeGreaterThan(0);
    expect(Math.max(...calls.map((c) => c.endedAt - c.startedAt))).toBeLessThan(CALL_BOUND_MS);
    await expectConsistent(calls);
    // Each memory's derived rows (full-text terms, the subject's count) were written in the same transaction.
    const [counts] = await cluster!.admin<{ n: number }>(subjectCountMismatchesSql(server.schema));
    expect(counts!.n).toBe(0);
    const [orphans] = await cluster!.admin<{ n: string }>(
      `select count(*) as n from "${server.schema}".memories m
        where not exists (select 1 from "${server.schema}".memory_terms t where t.memory_id = m.id)`,
    );
    expect(Number(orphans!.n)).toBe(0);
  });
});
