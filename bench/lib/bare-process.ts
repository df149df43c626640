// The baseline of bench/jsonrpc-overhead.ts in its own process: a bare Fastify app (no hooks, no logger,
// no auth, no parsing) answering POST /{name} with the bytes it is given, exactly as the service answers
// them. Started by startBareChild (bench/lib/server-child.ts).
import Fastify from 'fastify';

const bodies = JSON.parse(process.env.BENCH_BARE_BODIES ?? '{}') as Record<string, string>;
const app = Fastify();
for (const [name, body] of Object.entries(bodies)) {
  app.post(`/${name}`, async (_request, reply) => reply.header('content-type', 'application/json; charset=utf-8').send(body));
}
const url = await app.listen({ host: '127.0.0.1', port: 0 });

process.on('message', async (message: { type: string; id: number }) => {
  if (message.type === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send!({ id: message.id, value: user + system });
  } else if (message.type === 'close') {
    await app.close();
    process.send!({ id: message.id, value: null });
    process.disconnect();
  }
});
process.send!({ type: 'ready', url, pid: process.pid });
