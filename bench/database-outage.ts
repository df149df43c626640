// How fast the service notices a PostgreSQL outage and how fast it serves again: four clients remember and
// recall in a loop against the server (its own process, synthetic embeddings so only the database matters) on a
// throwaway cluster of this benchmark's own (never the shared one), which is stopped (`pg_ctl stop -m fast`) and
// started again, three rounds. Reports the time from the stop to the first DATABASE_ERROR answer, the slowest
// answer while the database is down, and the time from the start to the first remember stored again.
// Needs root and the PostgreSQL binaries (as the fault tests). Run: npx tsx bench/database-outage.ts [rounds=3]
import { faultTestsUnavailable, startOwnPostgres } from '../test/helpers/own-postgres.js';
import { acknowledged, startTraffic } from '../test/helpers/traffic.js';
import { startServerChild } from './lib/server-child.js';

const rounds = Number(process.argv[2] ?? 3);
const DOWN_MS = 3_000;

const unavailable = faultTestsUnavailable({ postgres: true });
if (unavailable !== undefined) throw new Error(`cannot run here: ${unavailable}`);

const waitFor = async (condition: () => boolean, timeoutMs: number): Promise<number> => {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return Date.now() - started;
};

console.log(`database outage benchmark: ${rounds} rounds of pg_ctl stop -m fast, ${DOWN_MS} ms down, start; 4 clients; node ${process.version}`);
const cluster = await startOwnPostgres();
try {
  const server = await startServerChild({ embedder: 'synthetic', env: { MEMORY_SERVICE_DATABASE_URL: cluster.url, MEMORY_SERVICE_DATABASE_SCHEMA: 'public' } });
  try {
    const tokens = await Promise.all(['ada', 'bob', 'cy', 'dee'].map((subject) => server.token(subject)));
    const traffic = startTraffic({ mcpUrl: server.mcpUrl, tokens, label: 'outage bench' });
    await waitFor(() => acknowledged(traffic.calls).length >= 20, 30_000);
    for (let round = 1; round <= rounds; round++) {
      const stoppedAt = Date.now();
      await cluster.stop('fast');
      const stopTook = Date.now() - stoppedAt;
      await waitFor(() => traffic.calls.some((c) => c.error === 'DATABASE_ERROR' && c.endedAt >= stoppedAt), 30_000);
      const firstError = Math.min(...traffic.calls.filter((c) => c.error === 'DATABASE_ERROR' && c.endedAt >= stoppedAt).map((c) => c.endedAt)) - stoppedAt;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, DOWN_MS - (Date.now() - stoppedAt))));
      const startedAt = Date.now();
      await cluster.start();
      const startTook = Date.now() - startedAt;
      const storedAgain = (c: (typeof traffic.calls)[number]) => c.tool === 'remember' && c.memoryId !== undefined && c.startedAt >= startedAt;
      await waitFor(() => traffic.calls.some(storedAgain), 30_000);
      const recovered = Math.min(...traffic.calls.filter(storedAgain).map((c) => c.endedAt)) - startedAt;
      const down = traffic.calls.filter((c) => c.startedAt >= stoppedAt && c.startedAt < startedAt);
      const slowest = Math.max(...down.map((c) => c.endedAt - c.startedAt));
      const failures = [...new Set(down.filter((c) => c.error !== undefined).map((c) => c.error))].join(', ');
      console.log(
        `round ${round}: first DATABASE_ERROR answered ${firstError} ms after pg_ctl stop began (it took ${stopTook} ms); ` +
          `${down.length} calls while down, slowest ${slowest} ms, errors: ${failures || 'none'}; ` +
          `first remember stored again ${recovered} ms after pg_ctl start began (it took ${startTook} ms to accept connections)`,
      );
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
    const calls = await traffic.stop();
    const unexpected = calls.filter((c) => c.error !== undefined && c.error !== 'DATABASE_ERROR');
    console.log(`${calls.length} calls in all, ${acknowledged(calls).length} remembers stored, ${unexpected.length} answers other than success or DATABASE_ERROR`);
  } finally {
    await server.close();
  }
} finally {
  await cluster.remove();
}
