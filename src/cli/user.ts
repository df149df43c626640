import { UserStore, usersFilePath, MIN_PASSWORD_LENGTH } from '../auth/authorization-server/user-store.js';
import type { Config } from '../config/load-config.js';
import { UsageError, type CommandIO } from './command.js';

export type UserAction = 'add' | 'list' | 'remove' | 'passwd';

export interface UserCommandIO extends CommandIO {
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
}

/** `user add|list|remove|passwd`: the people who can sign in to the built-in authorization server. */
export async function userCommand(
  config: Config,
  action: UserAction,
  args: readonly string[],
  io: UserCommandIO = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin },
): Promise<number> {
  const users = new UserStore(usersFilePath(config.dataDir));
  if (!config.oauth.builtIn && action !== 'list') {
    io.stderr.write(
      `warning: OAuthAuthorizationServer is ${config.oauth.authorizationServer ?? 'unset'}, not this service: ` +
        'these users can sign in only once the built-in authorization server is used\n',
    );
  }
  if (action === 'list') {
    if (args.length > 0) throw new UsageError('user list: takes no arguments');
    const all = users.list();
    if (all.length === 0) {
      io.stdout.write('No users. Add one with: memory-service user add NAME\n');
      return 0;
    }
    const width = Math.max(4, ...all.map((user) => user.name.length));
    io.stdout.write(`${'NAME'.padEnd(width)}  ${'ID (token sub)'.padEnd(36)}  CREATED\n`);
    for (const user of all) io.stdout.write(`${user.name.padEnd(width)}  ${user.id}  ${user.createdAt}\n`);
    return 0;
  }

  const [name, ...extra] = args;
  if (name === undefined || extra.length > 0) throw new UsageError(`user ${action}: give exactly one user NAME`);
  switch (action) {
    case 'add': {
      const password = await readNewPassword(io);
      const user = await users.add(name, password);
      io.stdout.write(
        `Added user ${user.name} (id ${user.id}: the owner of the memories saved after signing in).\n` +
          `A token for their memories: npx memory-service token issue --user ${user.name}\n`,
      );
      return 0;
    }
    case 'passwd': {
      if (users.findByName(name) === undefined) throw new UsageError(`user passwd: no user named ${JSON.stringify(name)}`);
      const password = await readNewPassword(io);
      const user = await users.setPassword(name, password);
      io.stdout.write(`Changed the password of ${user.name}; clients signed in before must sign in again.\n`);
      return 0;
    }
    case 'remove': {
      const user = users.remove(name);
      io.stdout.write(
        `Removed user ${user.name}. Refresh tokens stop working now, access tokens within the hour; ` +
          `the memories of ${user.id} stay in the database.\n`,
      );
      return 0;
    }
  }
}

/** From a prompt without echo (typed twice) on a terminal, else the first line of standard input. */
async function readNewPassword(io: UserCommandIO): Promise<string> {
  if (io.stdin.isTTY === true && typeof io.stdin.setRawMode === 'function') {
    const password = await promptHidden(io, 'Password: ');
    const again = await promptHidden(io, 'Repeat password: ');
    if (password !== again) throw new UsageError('the two passwords differ; nothing changed');
    return password;
  }
  const text = await readAll(io.stdin);
  const password = text.split(/\r?\n/)[0] ?? '';
  if (password === '') {
    throw new UsageError(`no password on standard input (pipe one line, at least ${MIN_PASSWORD_LENGTH} characters)`);
  }
  return password;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function promptHidden(io: UserCommandIO, question: string): Promise<string> {
  const { stdin } = io;
  io.stderr.write(question);
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (error?: Error) => {
      stdin.setRawMode!(false);
      stdin.pause();
      stdin.removeListener('data', onData);
      io.stderr.write('\n');
      if (error === undefined) resolve(value);
      else reject(error);
    };
    const onData = (chunk: Buffer | string) => {
      for (const char of chunk.toString()) {
        if (char === '\r' || char === '\n') return finish();
        if (char === '\u0003' || char === '\u0004') return finish(new UsageError('cancelled; nothing changed'));
        if (char === '\u007f' || char === '\b') value = [...value].slice(0, -1).join('');
        else if (char >= ' ') value += char;
      }
    };
    stdin.setRawMode!(true);
    stdin.resume();
    stdin.on('data', onData);
  });
}
