import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { createHash, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, required } from './docker.js';
import { freePort } from './test-server.js';

/** Debian's nginx (`apt-get install nginx`). */
export const NGINX_PATH = '/usr/sbin/nginx';

/**
 * Undefined when nginx and openssl are installed; otherwise why the reverse-proxy tests are skipped. Under
 * MEMORY_SERVICE_TEST_NGINX=1 (set by .ci/run) their absence is an error instead.
 */
export function nginxSkipReason(): string | undefined {
  const missing = Object.entries({ [NGINX_PATH]: '-v', openssl: 'version' }).flatMap(([tool, versionFlag]) => {
    try {
      execFileSync(tool, [versionFlag], { stdio: 'ignore' });
      return [];
    } catch {
      return [tool];
    }
  });
  if (missing.length === 0) return undefined;
  if (required('MEMORY_SERVICE_TEST_NGINX')) {
    throw new Error(`${missing.join(' and ')} missing, and MEMORY_SERVICE_TEST_NGINX is set: .ci/run must install nginx and openssl`);
  }
  return `reverse-proxy tests skipped: ${missing.join(' and ')} not found (apt-get install -y nginx openssl)`;
}

const openssl = (args: readonly string[], cwd: string) =>
  new Promise<void>((resolve, reject) => {
    execFile('openssl', args, { cwd }, (error, _stdout, stderr) => (error === null ? resolve() : reject(new Error(`openssl ${args[0]}: ${stderr}`))));
  });

export interface TestTls {
  /** The test CA's certificate (PEM): what clients trust. */
  readonly caPem: string;
  /** The server's certificate followed by the CA's, as Let's Encrypt's fullchain.pem. */
  readonly fullchainFile: string;
  readonly keyFile: string;
  /** base64 SHA-256 of the server key's SubjectPublicKeyInfo, for Chromium's --ignore-certificate-errors-spki-list. */
  readonly spkiSha256: string;
}

/** A throwaway CA made with openssl, and a server certificate it signed for `hostnames`. */
export async function makeTestTls(dir: string, hostnames: readonly string[]): Promise<TestTls> {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=memory-service test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
  await openssl(['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${hostnames[0]}`], dir);
  writeFileSync(
    join(dir, 'server.ext'),
    `basicConstraints = CA:FALSE\nkeyUsage = critical, digitalSignature\nextendedKeyUsage = serverAuth\nsubjectAltName = ${hostnames.map((name) => `DNS:${name}`).join(', ')}\n`,
  );
  await openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'server.ext', '-out', 'server.pem'], dir);
  const caPem = readFileSync(join(dir, 'ca.pem'), 'utf8');
  const serverPem = readFileSync(join(dir, 'server.pem'), 'utf8');
  const fullchainFile = join(dir, 'fullchain.pem');
  writeFileSync(fullchainFile, serverPem + caPem);
  const spki = new X509Certificate(serverPem).publicKey.export({ type: 'spki', format: 'der' });
  return { caPem, fullchainFile, keyFile: join(dir, 'server.key'), spkiSha256: createHash('sha256').update(spki).digest('base64') };
}

/** The public name the proxy tests use: `.test` is reserved (RFC 6761), so it can only mean this machine here. */
export const PUBLIC_NAME = 'memory.test';

/** A `lookup` for undici's connect options: the public name resolves to loopback, as DNS would point it at the proxy. */
export function publicNameToLoopback(
  hostname: string,
  options: { all?: boolean },
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
): void {
  if (hostname !== PUBLIC_NAME) {
    dnsLookup(hostname, { all: options.all === true }, callback as never);
    return;
  }
  if (options.all === true) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
}

/** Chromium switches: the public name resolves to loopback, and the test certificate (by its key) is trusted, no other. */
export function chromiumArgsFor(tls: TestTls): string[] {
  return [`--host-resolver-rules=MAP ${PUBLIC_NAME} 127.0.0.1`, `--ignore-certificate-errors-spki-list=${tls.spkiSha256}`];
}

/** The ```nginx block of docs/deployment.md's "Behind a reverse proxy" section, as written there. */
export function readmeNginxConfig(): string {
  const guide = readFileSync(join(REPO_ROOT, 'docs', 'deployment.md'), 'utf8');
  const section = guide.slice(guide.indexOf('## Behind a reverse proxy'));
  const block = /```nginx\n([\s\S]*?)```/.exec(section);
  if (block === null) throw new Error('docs/deployment.md: no ```nginx block under "Behind a reverse proxy"');
  return block[1]!;
}

export interface SiteValues {
  readonly serverName: string;
  readonly listen: string;
  readonly certificate: string;
  readonly key: string;
  /** host:port of each service process. */
  readonly upstreams: readonly string[];
}

/**
 * The documented configuration with only its site-specific values replaced: server name, listen address,
 * certificate files and the upstream servers. Everything else is used exactly as documented; an edit
 * that moves one of those values out of reach fails here rather than going untested.
 */
export function siteConfigFromReadme(site: SiteValues): string {
  let config = readmeNginxConfig();
  const replace = (pattern: RegExp, by: string, what: string) => {
    if (config.search(pattern) === -1) throw new Error(`docs/deployment.md nginx block: cannot find ${what} (${pattern})`);
    config = config.replace(pattern, by);
  };
  replace(/\blisten 443 ssl\b/, `listen ${site.listen} ssl`, 'listen 443 ssl');
  replace(/\bmemory\.example\.com\b/g, site.serverName, 'memory.example.com');
  replace(/ssl_certificate\s+\S+;/, `ssl_certificate     ${site.certificate};`, 'ssl_certificate');
  replace(/ssl_certificate_key\s+\S+;/, `ssl_certificate_key ${site.key};`, 'ssl_certificate_key');
  // The upstream's `server 127.0.0.1:8787 …;` line stands for one line per service process.
  replace(/^(\s*)server 127\.0\.0\.1:8787([^;]*);/m, site.upstreams.map((address) => `$1server ${address}$2;`).join('\n'), 'server 127.0.0.1:8787');
  return config;
}

export interface Nginx {
  readonly port: number;
  readonly dir: string;
  /** nginx's access log so far: one line per request, `$remote_addr $request_id "$request" $status`. */
  accessLog(): string;
  errorLog(): string;
  /** Stops nginx (graceful, then forced) and removes its folder. */
  stop(): Promise<void>;
}

export interface StartNginxOptions {
  /** The server block(s), given the port nginx should listen on; see siteConfigFromReadme. */
  readonly site: (port: number) => string;
  /** Default: a free one. Known in advance when BaseUrl, which names it, must be set first. */
  readonly port?: number;
}

/**
 * Debian's nginx in the foreground with a configuration of its own (no system files, logs and temp files in
 * a temporary folder), listening on a free loopback port; resolves once it accepts connections.
 */
export async function startNginx(options: StartNginxOptions): Promise<Nginx> {
  const dir = mkdtempSync(join(tmpdir(), 'memory-service-nginx-'));
  // Workers drop root for `nobody`: they must reach the temp folders (request bodies over 16k are buffered there).
  chmodSync(dir, 0o755);
  const temp = join(dir, 'temp');
  mkdirSync(temp, { mode: 0o777 });
  chmodSync(temp, 0o777);
  const port = options.port ?? (await freePort());
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log notice;
events { worker_connections 256; }
http {
    log_format with_request_id '$remote_addr $request_id "$request" $status';
    access_log ${dir}/access.log with_request_id;
    client_body_temp_path ${temp}/body;
    proxy_temp_path ${temp}/proxy;
    fastcgi_temp_path ${temp}/fastcgi;
    uwsgi_temp_path ${temp}/uwsgi;
    scgi_temp_path ${temp}/scgi;

${options.site(port)}
}
`,
  );
  const args = ['-p', dir, '-c', conf, '-e', `${dir}/error.log`];
  try {
    execFileSync(NGINX_PATH, [...args, '-t'], { stdio: 'pipe' });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? String(error);
    const text = readFileSync(conf, 'utf8');
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`nginx refused the configuration:\n${stderr}\n${text}`, { cause: error });
  }
  const child: ChildProcess = spawn(NGINX_PATH, [...args, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const read = (file: string) => (existsSync(join(dir, file)) ? readFileSync(join(dir, file), 'utf8') : '');

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGQUIT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      const log = read('error.log');
      await stop();
      throw new Error(`nginx did not start: ${stderr}\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { port, dir, accessLog: () => read('access.log'), errorLog: () => read('error.log'), stop };
}

/** nginx on `port` for PUBLIC_NAME with the test certificate, configured by docs/deployment.md's block, in front of `upstreamPorts`. */
export function startReadmeProxy(tls: TestTls, port: number, upstreamPorts: readonly number[]): Promise<Nginx> {
  return startNginx({
    port,
    site: (listenPort) =>
      siteConfigFromReadme({
        serverName: PUBLIC_NAME,
        listen: `127.0.0.1:${listenPort}`,
        certificate: tls.fullchainFile,
        key: tls.keyFile,
        upstreams: upstreamPorts.map((upstream) => `127.0.0.1:${upstream}`),
      }),
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
