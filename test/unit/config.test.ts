import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load-config.js';
import { settings } from '../../src/config/settings.js';

const dirs: string[] = [];
const dir = () => {
  const created = mkdtempSync(join(tmpdir(), 'memory-config-'));
  dirs.push(created);
  return created;
};
afterAll(() => {
  for (const created of dirs) rmSync(created, { recursive: true, force: true });
});

describe('loadConfig', () => {
  it('applies the embedded defaults when there is no file', () => {
    const cwd = dir();
    const config = loadConfig({ cwd, env: { HOME: '/home/ada' } });
    expect(config.configFile).toBeUndefined();
    expect(config.baseUrl).toBe('http://127.0.0.1:8787');
    expect(config.host).toBe('127.0.0.1');
    expect(config.port).toBe(8787);
    expect(config.dataDir).toBe('/home/ada/.local/share/memory-service');
    expect(config.database).toEqual({
      url: undefined,
      schema: 'public',
      dataDir: '/home/ada/.local/share/memory-service/pglite',
      connectTimeoutMs: 5000,
      statementTimeoutMs: 15000,
    });
    expect(config.embedding.provider).toBe('local');
    expect(config.memory).toEqual({ maxTextChars: 16000, nearDuplicateThreshold: 0.85, quota: { memories: 50_000, textBytes: 50 * 1024 * 1024 } });
    expect(config.oauth).toEqual({
      authorizationServer: 'http://127.0.0.1:8787',
      builtIn: true,
      asIniFile: '/home/ada/.local/share/memory-service/oauth-as.ini',
      audience: 'http://127.0.0.1:8787/mcp',
      subjectClaim: 'sub',
      clientMetadataAllowedHosts: [],
    });
    expect(Object.isFrozen(config.oauth)).toBe(true);
  });

  it('follows XDG_DATA_HOME', () => {
    const config = loadConfig({ cwd: dir(), env: { HOME: '/home/ada', XDG_DATA_HOME: '/data/xdg' } });
    expect(config.dataDir).toBe('/data/xdg/memory-service');
  });

  it('reads --config, then MEMORY_SERVICE_CONFIG, then ./application.ini', () => {
    const cwd = dir();
    writeFileSync(join(cwd, 'application.ini'), 'Port = 9001\n');
    writeFileSync(join(cwd, 'other.ini'), 'Port = 9002\n');
    writeFileSync(join(cwd, 'third.ini'), 'Port = 9003\n');
    expect(loadConfig({ cwd, env: {} }).port).toBe(9001);
    expect(loadConfig({ cwd, env: { MEMORY_SERVICE_CONFIG: 'other.ini' } }).port).toBe(9002);
    expect(loadConfig({ cwd, env: { MEMORY_SERVICE_CONFIG: 'other.ini' }, configFile: 'third.ini' }).port).toBe(9003);
  });

  it('lets MEMORY_SERVICE_* variables override the file', () => {
    const cwd = dir();
    writeFileSync(
      join(cwd, 'application.ini'),
      'BaseUrl = https://memory.example.com/\nPort = 9001\nOAuthAuthorizationServer = https://memory.example.com\nMaxTextChars = 100\n',
    );
    const config = loadConfig({
      cwd,
      env: { MEMORY_SERVICE_PORT: '9100', MEMORY_SERVICE_DATA_DIR: '/srv/mem', MEMORY_SERVICE_DATABASE_URL: 'postgres://u:p@db/x' },
    });
    expect(config.port).toBe(9100);
    expect(config.baseUrl).toBe('https://memory.example.com');
    expect(config.resourceUrl).toBe('https://memory.example.com/mcp');
    expect(config.dataDir).toBe('/srv/mem');
    expect(config.database.url).toBe('postgres://u:p@db/x');
    expect(config.memory.maxTextChars).toBe(100);
    expect(config.oauth.builtIn).toBe(true);
  });

  it('leaves the resource server unconfigured when a file does not name an authorization server', () => {
    const cwd = dir();
    writeFileSync(join(cwd, 'application.ini'), 'Port = 9001\n');
    expect(loadConfig({ cwd, env: {} }).oauth.authorizationServer).toBeUndefined();
  });

  it('refuses to start listing every bad setting at once', () => {
    const cwd = dir();
    writeFileSync(
      join(cwd, 'application.ini'),
      'Port = eighty\nMaxTextChars = -1\nEmbeddingProvider = magic\nOAuthAsIniFile = relative/path.ini\nColour = blue\nOpenAIApiKey = sk-nope\n[section]\nx = 1\n',
    );
    let error: unknown;
    try {
      loadConfig({ cwd, env: { MEMORY_SERVICE_BASE_URL: 'not a url' } });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['Port', 'MaxTextChars', 'EmbeddingProvider', 'OAuthAsIniFile', 'Colour: unknown setting', 'OpenAIApiKey: secrets', 'BaseUrl', '[section]']) {
      expect(problems).toContain(name);
    }
    expect(problems).not.toContain('sk-nope');
  });

  it('refuses a state file inside the application tree', () => {
    expect(() =>
      loadConfig({ cwd: dir(), env: { MEMORY_SERVICE_OAUTH_AS_INI_FILE: '/opt/app/state/oauth.ini' }, appRoot: '/opt/app' }),
    ).toThrow(/OAuthAsIniFile: must be outside the application tree/);
  });

  it('takes the OpenAI key only from the environment', () => {
    const config = loadConfig({ cwd: dir(), env: { OPENAI_API_KEY: 'sk-test', MEMORY_SERVICE_EMBEDDING_PROVIDER: 'openai' } });
    expect(config.embedding).toEqual({
      provider: 'openai',
      model: 'text-embedding-3-small',
      dimensions: undefined,
      baseUrl: undefined,
      apiKey: 'sk-test',
      timeoutMs: 10000,
      concurrency: 8,
      queueLimit: 64,
    });
  });

  it('resolves the embedding model once: the local model under either name, an OpenAI model without its prefix', () => {
    for (const model of ['', 'local:universal-sentence-encoder-lite', 'universal-sentence-encoder-lite']) {
      expect(loadConfig({ cwd: dir(), env: { MEMORY_SERVICE_EMBEDDING_MODEL: model, MEMORY_SERVICE_EMBEDDING_DIMENSIONS: '512', MEMORY_SERVICE_LOCAL_MODEL_WORKERS: '3' } }).embedding).toEqual({
        provider: 'local',
        workers: 3,
      });
    }
    const openai = loadConfig({
      cwd: dir(),
      env: {
        MEMORY_SERVICE_EMBEDDING_PROVIDER: 'openai',
        MEMORY_SERVICE_EMBEDDING_MODEL: 'openai:nomic-embed-text',
        MEMORY_SERVICE_EMBEDDING_DIMENSIONS: '768',
        MEMORY_SERVICE_OPENAI_BASE_URL: 'http://localhost:11434/v1/',
        MEMORY_SERVICE_EMBEDDING_TIMEOUT_MS: '3000',
        MEMORY_SERVICE_EMBEDDING_CONCURRENCY: '2',
        MEMORY_SERVICE_EMBEDDING_QUEUE_LIMIT: '0',
      },
    });
    expect(openai.embedding).toEqual({
      provider: 'openai',
      model: 'nomic-embed-text',
      dimensions: 768,
      baseUrl: 'http://localhost:11434/v1',
      apiKey: undefined,
      timeoutMs: 3000,
      concurrency: 2,
      queueLimit: 0,
    });
  });

  it.each([
    ['another model for the local provider', { MEMORY_SERVICE_EMBEDDING_MODEL: 'text-embedding-3-small' }, /EmbeddingModel: the local embedding provider only supports local:universal-sentence-encoder-lite/],
    ['another dimension for the local model', { MEMORY_SERVICE_EMBEDDING_DIMENSIONS: '1536' }, /EmbeddingDimensions: the local embedding model has 512 dimensions \(got 1536\)/],
    ['an OpenAI base URL for the local provider', { MEMORY_SERVICE_OPENAI_BASE_URL: 'http://localhost:11434/v1' }, /OpenAIBaseUrl: only applies when EmbeddingProvider = openai/],
    ['an OpenAI model prefix without a model', { MEMORY_SERVICE_EMBEDDING_PROVIDER: 'openai', MEMORY_SERVICE_EMBEDDING_MODEL: 'openai:' }, /EmbeddingModel: names no model/],
    ['an OpenAI base URL that is not http(s)', { MEMORY_SERVICE_EMBEDDING_PROVIDER: 'openai', MEMORY_SERVICE_OPENAI_BASE_URL: 'ftp://models.local/v1' }, /OpenAIBaseUrl: must be an http\(s\) URL/],
    ['an OpenAI base URL with credentials', { MEMORY_SERVICE_EMBEDDING_PROVIDER: 'openai', MEMORY_SERVICE_OPENAI_BASE_URL: 'https://user:pw@models.example.com/v1' }, /OpenAIBaseUrl: must not contain a user name or password/],
    ['a client metadata host given as a URL', { MEMORY_SERVICE_OAUTH_CLIENT_METADATA_ALLOWED_HOSTS: 'clients.internal, https://other.internal/x' }, /OAuthClientMetadataAllowedHosts: must list host names or IP addresses/],
  ])('refuses %s', (_name, env, problem) => {
    expect(() => loadConfig({ cwd: dir(), env })).toThrow(problem);
  });

  it('reads the hosts allowed to serve client metadata documents from private addresses', () => {
    const config = loadConfig({ cwd: dir(), env: { MEMORY_SERVICE_OAUTH_CLIENT_METADATA_ALLOWED_HOSTS: 'Clients.Internal, 10.0.0.7,[fd00::7]' } });
    expect(config.oauth.clientMetadataAllowedHosts).toEqual(['clients.internal', '10.0.0.7', '[fd00::7]']);
  });

  it('documents every setting in application.ini.example', () => {
    const example = readFileSync(new URL('../../application.ini.example', import.meta.url), 'utf8');
    for (const [name, { env }] of Object.entries(settings)) {
      if (name === 'DatabaseSchema' || name === 'DataDir' || name === 'OAuthAsIniFile') {
        expect(example).toMatch(new RegExp(`^;? ?${name} =`, 'm'));
      } else {
        expect(example).toMatch(new RegExp(`^${name} =`, 'm'));
      }
      expect(example).toContain(env);
    }
  });
});
