import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import { issueAccessToken } from '../../src/auth/authorization-server/access-token.js';
import { DEFAULT_SCOPE } from '../../src/auth/scopes.js';
import { composeService, type ComposeOptions, type Service } from '../../src/compose.js';
import { loadConfig, type Config } from '../../src/config/load-config.js';
import type { EmbeddingProvider } from '../../src/embeddings/provider.js';
import type { Logger } from '../../src/logger.js';
import { dropSchema } from './drop-schema.js';
import { TEST_DATABASE_URL, uniqueSchema, type Engine } from './engines.js';
import { sharedLocalEmbedder, sharedPGlite } from './shared.js';

export interface TestServerOptions {
  readonly engine: Engine;
  /** Extra MEMORY_SERVICE_* variables (or OPENAI_API_KEY). */
  readonly env?: Record<string, string>;
  /** Settings file contents; when given, the server runs from a file like an operator's. */
  readonly iniFile?: string;
  /** Default: the file's shared local model; 'from-config' builds the provider the configuration names. */
  readonly embedder?: EmbeddingProvider | 'from-config';
  /** Reuse the data directory (and so the OAuth state file) of an earlier server. */
  readonly dataDir?: string;
  /** Reuse an earlier server's schema (a restart). */
  readonly schema?: string;
  /** Reuse an earlier server's port (a restart keeps BaseUrl, hence the issuer). */
  readonly port?: number;
  /** Where the service logs (default: silent). */
  readonly logger?: Logger;
  /** PostgreSQL engine: another server than TEST_DATABASE_URL (a test's own cluster, or a proxy in front). */
  readonly databaseUrl?: string;
  /** PGlite engine: open the configured data folder (`<DataDir>/pglite`) instead of the file's shared in-memory PGlite. */
  readonly ownPglite?: boolean;
  /** The authorization server's bounds, the network edge of its metadata-document fetches, the page's sign-in budget. */
  readonly compose?: Pick<ComposeOptions, 'authorizationServerLimits' | 'clientMetadataConnect' | 'webSignInPerMinute'>;
}

export interface TestServer {
  /** BaseUrl (also where it listens, unless the test set BaseUrl to another server's, as replicas share one). */
  readonly url: string;
  /** Where this server listens: http://127.0.0.1:<port>. */
  readonly address: string;
  readonly mcpUrl: string;
  readonly config: Config;
  readonly service: Service;
  readonly dataDir: string;
  readonly schema: string;
  token(subject: string, options?: { scope?: string; ttlSeconds?: number }): Promise<string>;
  /** An official MCP SDK client, connected with a bearer token. */
  client(token: string): Promise<Client>;
  /** POST /mcp with a JSON body (string bodies are sent as they are). */
  post(body: unknown, headers?: Record<string, string>): Promise<Response>;
  /** tools/call over raw HTTP, returning the structuredContent of the result. */
  call(token: string, name: string, args: Record<string, unknown>): Promise<{ isError: boolean; structured: Record<string, unknown> }>;
  /** Runs SQL as the database owner (outside row-level security) in this server's schema. */
  admin(statement: string): Promise<void>;
  /** Stops the server; keeps the data directory and schema when `keepData`. */
  close(options?: { keepData?: boolean }): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

export async function startTestServer(options: TestServerOptions): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'memory-service-test-'));
  const schema = options.schema ?? uniqueSchema();
  const port = options.port ?? (await freePort());
  let configFile: string | undefined;
  if (options.iniFile !== undefined) {
    configFile = join(dataDir, 'application.ini');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(configFile, options.iniFile);
  }
  const config = loadConfig({
    configFile,
    cwd: dataDir,
    env: {
      HOME: dataDir,
      MEMORY_SERVICE_PORT: String(port),
      MEMORY_SERVICE_DATA_DIR: dataDir,
      MEMORY_SERVICE_DATABASE_SCHEMA: schema,
      ...(options.engine === 'postgres' ? { MEMORY_SERVICE_DATABASE_URL: options.databaseUrl ?? TEST_DATABASE_URL! } : {}),
      ...options.env,
    },
  });
  const service = await composeService(config, {
    ...options.compose,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.embedder === 'from-config' ? {} : { embedder: options.embedder ?? sharedLocalEmbedder() }),
    ...(options.engine === 'pglite' && options.ownPglite !== true ? { pglite: await sharedPGlite() } : {}),
  });
  await service.app.listen({ host: config.host, port: config.port });

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(config.resourceUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  let nextId = 1;

  return {
    url: config.baseUrl,
    address: `http://${config.host}:${port}`,
    mcpUrl: config.resourceUrl,
    config,
    service,
    dataDir,
    schema,
    async token(subject, tokenOptions = {}) {
      if (service.stateFile === undefined) throw new Error('this server has no built-in authorization server');
      return issueAccessToken(service.stateFile, {
        issuer: config.oauth.authorizationServer!,
        audience: config.oauth.audience,
        subject,
        scope: tokenOptions.scope ?? DEFAULT_SCOPE,
        ttlSeconds: tokenOptions.ttlSeconds ?? 3600,
      });
    },
    async client(token) {
      const client = new Client({ name: 'memory-service-tests', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(config.resourceUrl), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      });
      await client.connect(transport);
      return client;
    },
    post,
    async call(token, name, args) {
      const response = await post(
        { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } },
        { authorization: `Bearer ${token}` },
      );
      const body = (await response.json()) as { result?: { isError?: boolean; structuredContent: Record<string, unknown> }; error?: unknown };
      if (body.result === undefined) throw new Error(`tools/call ${name} failed: HTTP ${response.status} ${JSON.stringify(body)}`);
      return { isError: body.result.isError === true, structured: body.result.structuredContent };
    },
    async admin(statement) {
      if (options.engine === 'pglite') {
        await (await sharedPGlite()).exec(`set search_path to "${schema}", public; ${statement}`);
        return;
      }
      const client = new pg.Client({ connectionString: options.databaseUrl ?? TEST_DATABASE_URL });
      await client.connect();
      try {
        await client.query(`set search_path to "${schema}", public; ${statement}`);
      } finally {
        await client.end();
      }
    },
    async close(closeOptions = {}) {
      await service.close();
      if (closeOptions.keepData === true) return;
      if (options.engine === 'postgres') await dropSchema(schema, options.databaseUrl ?? TEST_DATABASE_URL!);
      if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
