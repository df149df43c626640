import { execFile, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root: the compose file and the Dockerfile's build context. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A flag set by .ci/run: the suite it guards must run, so a missing tool fails instead of skipping. */
export function required(flag: string): boolean {
  const value = process.env[flag];
  return value !== undefined && value !== '' && value !== '0' && value !== 'false';
}

function succeeds(command: string, args: readonly string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore', timeout: 20_000 });
    return true;
  } catch {
    return false;
  }
}

/** `docker compose` (the v2 plugin) when the CLI has it, else Debian's `docker-compose`; undefined if neither. */
function composeCommand(): readonly string[] | undefined {
  if (succeeds('docker', ['compose', 'version'])) return ['docker', 'compose'];
  if (succeeds('docker-compose', ['version'])) return ['docker-compose'];
  return undefined;
}

/**
 * Undefined when a Docker engine and Compose are usable; otherwise why the Docker tests are skipped. Under
 * MEMORY_SERVICE_TEST_DOCKER=1 (set by .ci/run) their absence is an error instead.
 */
export function dockerSkipReason(): string | undefined {
  let reason: string | undefined;
  if (!succeeds('docker', ['info', '--format', '{{.ServerVersion}}'])) reason = 'no usable Docker engine (`docker info` failed)';
  else if (composeCommand() === undefined) reason = 'neither `docker compose` nor `docker-compose` is installed';
  if (reason !== undefined && required('MEMORY_SERVICE_TEST_DOCKER')) {
    throw new Error(`${reason}, and MEMORY_SERVICE_TEST_DOCKER is set: .ci/run must install and start Docker`);
  }
  return reason === undefined ? undefined : `Docker tests skipped: ${reason}`;
}

export interface CommandResult {
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command; a non-zero exit rejects with its output. */
export function run(command: string, args: readonly string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { cwd: REPO_ROOT, env: options.env ?? process.env, timeout: options.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`${command} ${args.join(' ')} failed: ${error.message}\n${stderr.slice(-4000)}`));
        else resolve({ stdout, stderr });
      },
    );
  });
}

/** What `docker inspect` says of a container, the parts the tests read. */
export interface ContainerState {
  readonly id: string;
  readonly startedAt: string;
  readonly restartCount: number;
  readonly running: boolean;
  /** The main process's exit code once it has stopped. */
  readonly exitCode: number;
  readonly health: string | undefined;
  readonly user: string;
  readonly mounts: readonly { readonly type: string; readonly name?: string; readonly destination: string }[];
}

export interface ComposeProject {
  readonly name: string;
  /** `docker compose -p NAME -f docker-compose.yml ARGS…` with the project's environment. */
  compose(args: readonly string[], timeoutMs?: number): Promise<CommandResult>;
  /** `exec -T SERVICE COMMAND…`: standard output, trimmed. */
  exec(service: string, command: readonly string[]): Promise<string>;
  container(service: string): Promise<ContainerState>;
  /** Polls until the service's container reports `healthy`; rejects with its logs after `timeoutMs`. */
  waitHealthy(service: string, timeoutMs: number): Promise<ContainerState>;
  /** Removes the project's containers, networks, volumes and locally built images. */
  destroy(): Promise<void>;
}

/**
 * A compose project over the repository's docker-compose.yml under its own name, so it never touches another
 * project's containers, and with only the given variables for compose's interpolation (none of the caller's
 * MEMORY_SERVICE_*, POSTGRES_* or OPENAI_API_KEY leak into it).
 */
export function composeProject(name: string, variables: Record<string, string>): ComposeProject {
  const command = composeCommand();
  if (command === undefined) throw new Error('no docker compose');
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^(MEMORY_SERVICE_|POSTGRES_|OPENAI_API_KEY$|COMPOSE_)/.test(key)) env[key] = value;
  }
  Object.assign(env, variables);
  const compose = (args: readonly string[], timeoutMs?: number) =>
    run(command[0]!, [...command.slice(1), '-p', name, '-f', 'docker-compose.yml', ...args], { env, ...(timeoutMs === undefined ? {} : { timeoutMs }) });

  const container = async (service: string): Promise<ContainerState> => {
    const id = (await compose(['ps', '--all', '-q', service])).stdout.trim();
    if (id === '') throw new Error(`no container for ${service} in ${name}`);
    const [info] = JSON.parse((await run('docker', ['inspect', id])).stdout) as {
      Id: string;
      RestartCount: number;
      State: { StartedAt: string; Running: boolean; ExitCode: number; Health?: { Status: string } };
      Config: { User: string };
      Mounts: { Type: string; Name?: string; Destination: string }[];
    }[];
    return {
      id: info!.Id,
      startedAt: info!.State.StartedAt,
      restartCount: info!.RestartCount,
      running: info!.State.Running,
      exitCode: info!.State.ExitCode,
      health: info!.State.Health?.Status,
      user: info!.Config.User,
      mounts: info!.Mounts.map((mount) => ({ type: mount.Type, destination: mount.Destination, ...(mount.Name === undefined ? {} : { name: mount.Name }) })),
    };
  };

  return {
    name,
    compose,
    async exec(service, args) {
      return (await compose(['exec', '-T', service, ...args])).stdout.trim();
    },
    container,
    async waitHealthy(service, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      let last: ContainerState | undefined;
      while (Date.now() < deadline) {
        last = await container(service).catch(() => undefined);
        if (last?.health === 'healthy') return last;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      const logs = await compose(['logs', '--no-color', '--tail', '60', service]).catch((error: Error) => ({ stdout: error.message }));
      throw new Error(`${service} not healthy within ${timeoutMs} ms (health: ${last?.health ?? 'no container'})\n${logs.stdout}`);
    },
    async destroy() {
      await compose(['down', '--volumes', '--rmi', 'local', '--remove-orphans', '--timeout', '10'], 180_000);
    },
  };
}
