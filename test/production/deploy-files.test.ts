import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { settings } from '../../src/config/settings.js';

/**
 * What the Dockerfile and docker-compose.yml say that running them cannot show: that every variable they set
 * is a real setting (an unknown one would be ignored silently), the Dockerfile's own health check (compose
 * replaces it), the start order and the published address. Building and running both, the image's user,
 * volumes and contents, is test/deploy/compose.test.ts.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string) => readFileSync(join(root, file), 'utf8');

interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

/** Dockerfile instructions grouped by stage (continuation lines joined, comments dropped). */
function dockerStages(text: string): Instruction[][] {
  const logical = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: Instruction[][] = [];
  for (const line of logical) {
    const [keyword = '', ...rest] = line.split(/\s+/);
    const instruction = { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    if (instruction.keyword === 'FROM') stages.push([]);
    stages.at(-1)?.push(instruction);
  }
  return stages;
}

/** ENV instructions' key=value pairs. */
function envOf(stage: Instruction[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { args } of stage.filter((i) => i.keyword === 'ENV')) {
    for (const [, key, value] of args.matchAll(/([A-Z_][A-Z0-9_]*)=(\S+)/g)) env[key!] = value!;
  }
  return env;
}

const knownEnv = new Set<string>([
  ...Object.values(settings).map((setting) => setting.env),
  'MEMORY_SERVICE_METRICS_TOKEN',
  'MEMORY_SERVICE_CONFIG',
  'OPENAI_API_KEY',
  'NODE_ENV',
]);

const stages = dockerStages(read('Dockerfile'));
const runtime = stages.at(-1)!;
const imageEnv = envOf(runtime);

describe('Dockerfile', () => {
  it('names only real settings in its environment', () => {
    for (const name of Object.keys(imageEnv)) expect(knownEnv, name).toContain(name);
  });

  it('checks health on /healthz of the port it serves', () => {
    const healthcheck = runtime.find((i) => i.keyword === 'HEALTHCHECK')!.args;
    expect(healthcheck).toContain(`http://127.0.0.1:${imageEnv.MEMORY_SERVICE_PORT}/healthz`);
    expect(runtime.find((i) => i.keyword === 'EXPOSE')!.args).toBe(imageEnv.MEMORY_SERVICE_PORT);
  });
});

describe('docker-compose.yml', () => {
  interface Service {
    image?: string;
    build?: string;
    environment?: Record<string, string>;
    volumes?: string[];
    ports?: string[];
    depends_on?: Record<string, { condition: string }>;
    healthcheck?: { test: string[] };
  }
  const compose = parseYaml(read('docker-compose.yml')) as { services: Record<string, Service>; volumes: Record<string, unknown> };
  const postgres = compose.services.postgres!;
  const service = compose.services['memory-service']!;
  /** `${NAME:-default}` as compose resolves it with NAME unset. */
  const resolved = (value: string) => value.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');
  const serviceEnv = Object.fromEntries(Object.entries(service.environment ?? {}).map(([key, value]) => [key, resolved(String(value))]));

  it('runs PostgreSQL with pgvector, healthy before the service starts', () => {
    expect(postgres.image).toMatch(/^pgvector\/pgvector:pg1[5-9]/);
    expect(postgres.healthcheck?.test.join(' ')).toContain('pg_isready');
    expect(service.depends_on?.postgres?.condition).toBe('service_healthy');
    expect(service.build).toBe('.');
  });

  it('points the service at that database and names only real settings', () => {
    const url = new URL(serviceEnv.MEMORY_SERVICE_DATABASE_URL!);
    const pgEnv = Object.fromEntries(Object.entries(postgres.environment ?? {}).map(([key, value]) => [key, resolved(String(value))]));
    expect(url.hostname).toBe('postgres');
    expect(decodeURIComponent(url.username)).toBe(pgEnv.POSTGRES_USER);
    expect(decodeURIComponent(url.password)).toBe(pgEnv.POSTGRES_PASSWORD);
    expect(url.pathname).toBe(`/${pgEnv.POSTGRES_DB}`);
    for (const name of Object.keys(serviceEnv)) expect(knownEnv, name).toContain(name);
  });

  it('checks readiness on /readyz and publishes the port on loopback only', () => {
    expect(service.healthcheck?.test.join(' ')).toContain(`http://127.0.0.1:${imageEnv.MEMORY_SERVICE_PORT}/readyz`);
    expect(service.ports?.map(resolved)).toEqual([`127.0.0.1:${imageEnv.MEMORY_SERVICE_PORT}:${imageEnv.MEMORY_SERVICE_PORT}`]);
  });
});

describe('.dockerignore', () => {
  it('keeps dependencies, build output, tests, local settings and git out of the build context', () => {
    const ignored = read('.dockerignore').split('\n').map((line) => line.trim());
    for (const entry of ['node_modules', 'dist', '.git', 'test', 'bench', 'application.ini']) expect(ignored).toContain(entry);
  });

  it('lists every package the compiled service imports among its production dependencies (the image installs only those)', () => {
    const { dependencies } = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };
    // Only from source: the local model's worker registers tsx's loader when it runs as TypeScript (tests).
    const sourceOnly = new Set(['tsx']);
    const missing: string[] = [];
    for (const file of readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts')) continue;
      // Import and export statements (to their semicolon), side-effect imports and import(): not any "from '" in code.
      const imports = /^\s*(?:import|export)\s[^;]*?\sfrom\s*'([^'.][^']*)'|^\s*import\s*'([^'.][^']*)'|\bimport\(\s*'([^'.][^']*)'/gm;
      for (const match of read(join('src', file)).matchAll(imports)) {
        const specifier = match[1] ?? match[2] ?? match[3];
        if (specifier === undefined || specifier.startsWith('node:')) continue;
        const parts = specifier.split('/');
        const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
        if (!(name in dependencies) && !sourceOnly.has(name)) missing.push(`${name} (src/${file})`);
      }
    }
    expect(missing).toEqual([]);
  });
});
