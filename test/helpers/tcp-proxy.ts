import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of PostgreSQL that can misbehave like a network does: forward nothing in
 * either direction while keeping connections open (a cut cable, a frozen host), refuse new connections, or cut
 * a connection exactly around a COMMIT so that the server commits but its answer never arrives.
 */
export interface TcpProxy {
  readonly port: number;
  /** Rewrites a postgres:// URL to go through the proxy. */
  via(url: string): string;
  /** 'pass' forwards; 'blackhole' holds every connection, old and new, and forwards nothing. */
  setMode(mode: 'pass' | 'blackhole'): void;
  /**
   * On the next simple-protocol COMMIT a client sends: 'after' forwards it and cuts the connection before the
   * server's answer gets back; 'before' cuts it without forwarding. Resolves once it has cut.
   */
  cutAtNextCommit(when: 'before' | 'after'): Promise<void>;
  close(): Promise<void>;
}

/** Query message 'Q', length 11 (4 + "commit\0"), as pg sends Kysely's commit. */
const COMMIT = Buffer.concat([Buffer.from('Q'), Buffer.from([0, 0, 0, 11]), Buffer.from('commit\0')]);

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: 'pass' | 'blackhole' = 'pass';
  let armed: { when: 'before' | 'after'; done: () => void } | undefined;
  const pairs = new Set<{ client: Socket; server: Socket }>();

  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    const pair = { client, server: upstream };
    pairs.add(pair);
    let cut = false;
    const end = () => {
      cut = true;
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('data', (chunk: Buffer) => {
      if (cut || mode === 'blackhole') return;
      if (armed !== undefined && chunk.includes(COMMIT)) {
        const { when, done } = armed;
        armed = undefined;
        cut = true; // nothing more goes back to the client
        if (when === 'after') upstream.write(chunk);
        // Time for the server to commit before the connection goes.
        setTimeout(() => {
          end();
          done();
        }, when === 'after' ? 300 : 0);
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!cut && mode !== 'blackhole') client.write(chunk);
    });
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    port,
    via(url) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    setMode(next) {
      mode = next;
    },
    cutAtNextCommit(when) {
      return new Promise<void>((resolve) => {
        armed = { when, done: resolve };
      });
    },
    close() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.server.destroy();
      }
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
