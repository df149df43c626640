import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { ConfigError, loadConfig, type Config } from '../config/load-config.js';
import { isServiceError } from '../errors.js';
import { StartError, UsageError, type CommandIO } from './command.js';
import type { UserAction } from './user.js';

const USAGE = `Usage: memory-service <command> [options]

Commands:
  serve                        Start the MCP server (the default; what \`npm start\` runs)
  migrate                      Apply database migrations and exit
  token issue --user NAME      Print a signed access token reaching user NAME's memories, the ones
        [--scope "memory:read memory:write"]   they see on the page (built-in authorization server)
        [--space NAME]...      only in these spaces: personal, a space's id or its name (repeatable)
        [--ttl 30d]
  reembed [--batch-size 64]    Re-embed every memory with the configured embedding model
  export --user NAME           Write every memory and tombstone of user NAME as JSONL to standard output
        [--space ID|NAME]      (their personal space, or one of their spaces by id or name)
  import --user NAME FILE      Import a JSONL file (an export, or an MCP memory server's memory.jsonl;
        [--batch-size 64]      - for standard input); exit 3 when some lines were refused
        [--space ID|NAME]      Into one of their spaces they may write (default: personal)
  user add NAME                Add a user of the built-in authorization server (password from a
                               prompt, or the first line of standard input)
  user passwd NAME             Change a user's password (ends their earlier logins)
  user remove NAME             Remove a user (their memories stay)
  user list                    List users and their ids (the \`sub\` owning their memories)

--user NAME may be --sub SUBJECT instead: a token's sub (a user's id, or a subject of your own; not a user's name).
Every command takes --config FILE (else $MEMORY_SERVICE_CONFIG, else ./application.ini if present).
With the embedded database (no DatabaseUrl), stop the server before migrate, reembed, export or import.
`;

/** The installed application's root (two levels above src/cli or dist/cli). */
export const APP_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * For `export`, which embeds nothing: the embedded database's WebAssembly runs as first compiled. Otherwise V8
 * optimises PGlite's largest functions in the background soon after it opens, and the process cannot end before
 * that compile is done: an export of 2,000 memories took 3.8 s on Node 24 instead of 1.8 s (2.8 s instead of 2.0 s
 * on Node 20; bench/README.md). Only from tens of thousands of memories would the optimised code pay. `serve` runs
 * long enough to gain from it; `import` and `reembed` run the local model's WebAssembly and `migrate` may build an
 * index over every memory: they keep it. Set before anything compiles WebAssembly (the flags are the process's).
 */
function keepWebAssemblyAsFirstCompiled(): void {
  setFlagsFromString('--no-wasm-tier-up');
  setFlagsFromString('--no-wasm-dynamic-tiering');
}

export async function main(argv: readonly string[], io: CommandIO = process): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        config: { type: 'string' },
        sub: { type: 'string' },
        user: { type: 'string' },
        scope: { type: 'string' },
        space: { type: 'string', multiple: true },
        ttl: { type: 'string' },
        'batch-size': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    io.stderr.write(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command = 'serve', ...rest] = positionals;
  if (values.help === true || command === 'help') {
    io.stdout.write(USAGE);
    return 0;
  }
  const config = (): Config =>
    loadConfig({ configFile: values.config, env: process.env, cwd: process.cwd(), appRoot: APP_ROOT });

  try {
    // Each command's module is loaded when it runs: `token issue` or `user add` need not load the server, the
    // database or the model (seconds, and hundreds of MB).
    // Commands whose further words are files, not subcommands.
    if (command === 'export' || command === 'import') {
      // `token issue` takes several spaces; a file holds one.
      if ((values.space?.length ?? 0) > 1) {
        io.stderr.write(`${command} takes one --space\n`);
        return 2;
      }
      const space = values.space?.[0];
      if (command === 'export') keepWebAssemblyAsFirstCompiled();
      const transfer = await import('./transfer.js');
      if (command === 'export') return await transfer.exportCommand(config(), { user: values.user, sub: values.sub, space, args: rest }, io);
      return await transfer.importCommand(config(), { user: values.user, sub: values.sub, space, batchSize: values['batch-size'], args: rest }, { ...io, stdin: process.stdin });
    }
    switch (`${command}${rest.length > 0 ? ` ${rest[0]}` : ''}`) {
      case 'serve':
        return await (await import('./serve.js')).serveCommand(config());
      case 'migrate':
        return await (await import('./migrate.js')).migrateCommand(config(), io);
      case 'token issue':
        return await (await import('./token-issue.js')).tokenIssueCommand(config(), { user: values.user, sub: values.sub, scope: values.scope, ttl: values.ttl, space: values.space }, io);
      case 'user add':
      case 'user list':
      case 'user remove':
      case 'user passwd':
        return await (await import('./user.js')).userCommand(config(), rest[0] as UserAction, rest.slice(1), { ...io, stdin: process.stdin });
      case 'reembed':
        return await (await import('./reembed.js')).reembedCommand(config(), { batchSize: values['batch-size'] }, io);
      default:
        io.stderr.write(`Unknown command: ${[command, ...rest].join(' ')}\n\n${USAGE}`);
        return 2;
    }
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr.write(`${error.message}\n`);
      return 2;
    }
    if (error instanceof UsageError) {
      io.stderr.write(`${error.message}\n`);
      return 2;
    }
    if (error instanceof StartError) {
      io.stderr.write(`${error.message}\n`);
      return 1;
    }
    if (!isServiceError(error)) {
      io.stderr.write(`${(error as Error).message}\n`);
      return 1;
    }
    // An operator reads this: the driver's own words help (a user of the MCP endpoint never sees them).
    const cause = error.code === 'DATABASE_ERROR' && error.cause instanceof Error ? ` (${error.cause.message})` : '';
    io.stderr.write(`${error.code}: ${error.message}${cause}\n`);
    return 1;
  }
}


