import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface AuthProxy {
  readonly url: string;
  readonly port: number;
  /** Requests forwarded so far, by method. */
  readonly seen: string[];
  close(): Promise<void>;
}

/**
 * A loopback reverse proxy that adds `Authorization: Bearer <token>` to every request and forwards it,
 * Host and Origin untouched (like nginx with `proxy_set_header Host $host`), to the service. For clients
 * that cannot send a header of their own, such as the MCP conformance suite.
 */
export async function startAuthProxy(target: { port: number }, token: string, port = 0): Promise<AuthProxy> {
  const seen: string[] = [];
  const server: Server = createServer((incoming, outgoing) => {
    seen.push(incoming.method ?? '');
    const upstream = request(
      {
        host: '127.0.0.1',
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, authorization: `Bearer ${token}` },
      },
      (response) => {
        outgoing.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(outgoing);
      },
    );
    upstream.on('error', () => {
      if (!outgoing.headersSent) outgoing.writeHead(502);
      outgoing.end();
    });
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}`,
    port: actual,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
