import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { main } from '../../src/cli/main.js';
import { loadConfig } from '../../src/config/load-config.js';
import { settings } from '../../src/config/settings.js';
import { freePort } from '../helpers/test-server.js';

/**
 * No Docker engine here: the Dockerfile and docker-compose.yml are checked as files, and the image's start
 * command is run as the image would run it, with the image's environment.
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
const workdir = runtime.find((i) => i.keyword === 'WORKDIR')!.args;
const cmd = JSON.parse(runtime.find((i) => i.keyword === 'CMD')!.args) as string[];

describe('Dockerfile', () => {
  it('is multi-stage: the runtime stage copies built files and pruned production dependencies', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const build = stages[0]!;
    const buildRuns = build.filter((i) => i.keyword === 'RUN').map((i) => i.args).join(' && ');
    expect(buildRuns).toMatch(/npm ci\b/);
    expect(buildRuns).toMatch(/npm prune --omit=dev|npm ci[^&]*--omit=dev/);
    // The prune comes after the install, so the node_modules copied out has no dev dependencies.
    expect(buildRuns.indexOf('--omit=dev')).toBeGreaterThan(buildRuns.indexOf('npm ci'));
    const runtimeRuns = runtime.filter((i) => i.keyword === 'RUN').map((i) => i.args).join(' ');
    expect(runtimeRuns).not.toMatch(/npm (ci|install)/);
    const copies = runtime.filter((i) => i.keyword === 'COPY').map((i) => i.args);
    expect(copies).toEqual(expect.arrayContaining(['--from=build /app/node_modules ./node_modules', '--from=build /app/dist ./dist']));
    expect(copies.some((args) => /\b(src|test|bench)\b/.test(args))).toBe(false);
    expect(runtime[0]!.args).toMatch(/^node:20\b/);
  });

  it('runs as a non-root user', () => {
    const user = runtime.filter((i) => i.keyword === 'USER').at(-1)?.args;
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
  });

  it('keeps the data and the OAuth state file on volumes outside the application tree', () => {
    const volumes = JSON.parse(runtime.find((i) => i.keyword === 'VOLUME')!.args) as string[];
    const stateFile = imageEnv.MEMORY_SERVICE_OAUTH_AS_INI_FILE!;
    const dataDir = imageEnv.MEMORY_SERVICE_DATA_DIR!;
    for (const path of [stateFile, dataDir]) {
      expect(path.startsWith(`${workdir}/`)).toBe(false);
      expect(volumes.some((volume) => path === volume || path.startsWith(`${volume}/`))).toBe(true);
    }
    expect(() => loadConfig({ env: imageEnv, cwd: '/nonexistent', appRoot: workdir })).not.toThrow();
  });

  it('names only real settings in its environment', () => {
    for (const name of Object.keys(imageEnv)) expect(knownEnv, name).toContain(name);
  });

  it('checks health on /healthz of the port it serves', () => {
    const healthcheck = runtime.find((i) => i.keyword === 'HEALTHCHECK')!.args;
    expect(healthcheck).toContain(`http://127.0.0.1:${imageEnv.MEMORY_SERVICE_PORT}/healthz`);
    expect(runtime.find((i) => i.keyword === 'EXPOSE')!.args).toBe(imageEnv.MEMORY_SERVICE_PORT);
  });

  it('starts `bin/memory-service.js serve`, which runs the compiled CLI', async () => {
    expect(cmd).toEqual(['node', 'bin/memory-service.js', 'serve']);
    expect(read('bin/memory-service.js')).toContain("from '../dist/cli/main.js'");
    const tsconfig = JSON.parse(read('tsconfig.build.json')) as { compilerOptions: { rootDir: string; outDir: string } };
    expect(tsconfig.compilerOptions).toMatchObject({ rootDir: 'src', outDir: 'dist' });
    let usage = '';
    const io = { stdout: { write: (text: string) => ((usage += text), true) }, stderr: { write: () => true } } as never;
    expect(await main(['--help'], io)).toBe(0);
    expect(usage).toMatch(/^\s+serve\s/m);
  });

  it("serves /healthz and /readyz when started with the image's environment, and stops on SIGTERM", async () => {
    const volumeRoot = mkdtempSync(join(tmpdir(), 'image-volumes-'));
    const port = await freePort();
    // The image's environment, with its volumes under a temporary folder and a free port.
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: volumeRoot };
    for (const [key, value] of Object.entries(imageEnv)) env[key] = value.startsWith('/var/lib/') ? join(volumeRoot, value) : value;
    env.MEMORY_SERVICE_PORT = String(port);
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../helpers/cli-entry.ts', import.meta.url)), ...cmd.slice(2)], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      let ready: Response | undefined;
      for (let i = 0; i < 750 && child.exitCode === null; i++) {
        ready = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
        if (ready?.status === 200) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(ready?.status, output).toBe(200);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      expect(output).toContain('memory-service listening');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(volumeRoot, { recursive: true, force: true });
    }
  }, 240_000);
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

  it('gives a valid configuration together with the image environment, state outside the application tree', () => {
    const config = loadConfig({ env: { ...imageEnv, ...serviceEnv }, cwd: '/nonexistent', appRoot: workdir });
    expect(config.database.url).toBeDefined();
    expect(config.host).toBe('0.0.0.0');
    expect(config.oauth.asIniFile.startsWith(`${workdir}/`)).toBe(false);
  });

  it('keeps the data folder and the OAuth state file on named volumes', () => {
    const mounts = (service.volumes ?? []).map((volume) => {
      const [name, target] = volume.split(':');
      return { name: name!, target: target! };
    });
    const config = loadConfig({ env: { ...imageEnv, ...serviceEnv }, cwd: '/nonexistent', appRoot: workdir });
    for (const path of [posix.dirname(config.oauth.asIniFile), config.dataDir]) {
      const mount = mounts.find((m) => path === m.target || path.startsWith(`${m.target}/`));
      expect(mount, path).toBeDefined();
      expect(Object.keys(compose.volumes)).toContain(mount!.name);
    }
  });

  it('checks readiness on /readyz and publishes the port on loopback only', () => {
    expect(service.healthcheck?.test.join(' ')).toContain(`http://127.0.0.1:${imageEnv.MEMORY_SERVICE_PORT}/readyz`);
    expect(service.ports).toEqual([`127.0.0.1:${imageEnv.MEMORY_SERVICE_PORT}:${imageEnv.MEMORY_SERVICE_PORT}`]);
  });
});

describe('.dockerignore', () => {
  it('keeps dependencies, build output, tests, local settings and git out of the build context', () => {
    const ignored = read('.dockerignore').split('\n').map((line) => line.trim());
    for (const entry of ['node_modules', 'dist', '.git', 'test', 'bench', 'application.ini']) expect(ignored).toContain(entry);
  });
});
