import { Agent, request } from 'node:http';
import { summarise, type Summary } from './stats.js';

// Keep-alive connections and no fetch machinery: the load generator shares the machine with the server.
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

export function postJson(url: string, token: string, body: unknown): Promise<{ status: number; text: string }> {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', 'content-length': payload.length, authorization: `Bearer ${token}` },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** tools/call; throws on a protocol or tool error, so a benchmark never counts failures as speed. */
export async function callTool(url: string, token: string, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const { status, text } = await postJson(url, token, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
  const body = JSON.parse(text) as { result?: { isError?: boolean; structuredContent: Record<string, unknown> } };
  if (status !== 200 || body.result === undefined || body.result.isError) throw new Error(`${name} failed: HTTP ${status} ${text.slice(0, 300)}`);
  return body.result.structuredContent;
}

/** Runs `operation(i)` with `concurrency` closed-loop workers for `seconds`; per-operation latencies and throughput. */
export async function runFor(seconds: number, concurrency: number, operation: (index: number, worker: number) => Promise<void>): Promise<Summary> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        await operation(next++, worker);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return summarise(latencies, performance.now() - started);
}
