import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UserStore } from '../../src/auth/authorization-server/user-store.js';
import { runCli } from '../helpers/cli.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('memory-service user', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'memory-users-'));
  dirs.push(dataDir);
  const env = { HOME: dataDir, MEMORY_SERVICE_DATA_DIR: dataDir };
  const usersFile = join(dataDir, 'users.json');

  it('adds a user with a password from standard input, stored as an argon2id hash', async () => {
    const { code, stdout, stderr } = await runCli(['user', 'add', 'Alice'], env, 'a very secret password\n');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Added user alice \(id [0-9a-f-]{36}/);
    const file = readFileSync(usersFile, 'utf8');
    expect(file).not.toContain('a very secret password');
    expect(file).toMatch(/\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(statSync(usersFile).mode & 0o777).toBe(0o600);
    const store = new UserStore(usersFile);
    expect((await store.authenticate('alice', 'a very secret password'))?.name).toBe('alice');
    expect(await store.authenticate('ALICE', 'a very secret password')).toBeDefined();
    expect(await store.authenticate('alice', 'wrong password!')).toBeUndefined();
  });

  it('lists users with the id that owns their memories', async () => {
    const { code, stdout } = await runCli(['user', 'list'], env);
    expect(code).toBe(0);
    const id = new UserStore(usersFile).findByName('alice')!.id;
    expect(stdout).toContain('ID (token sub)');
    expect(stdout).toMatch(new RegExp(`alice\\s+${id}`));
  });

  it('refuses a duplicate, a short password and a bad name, changing nothing', async () => {
    const before = readFileSync(usersFile, 'utf8');
    const duplicate = await runCli(['user', 'add', 'alice'], env, 'another long password\n');
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toContain('INVALID_INPUT: user "alice" already exists');
    const short = await runCli(['user', 'add', 'bob'], env, 'short\n');
    expect(short.code).toBe(1);
    expect(short.stderr).toContain('at least 8 characters');
    const badName = await runCli(['user', 'add', 'bob smith'], env, 'a long enough password\n');
    expect(badName.stderr).toContain('user name must be');
    const noPassword = await runCli(['user', 'add', 'bob'], env, '');
    expect(noPassword.code).toBe(2);
    expect(noPassword.stderr).toContain('no password on standard input');
    expect(readFileSync(usersFile, 'utf8')).toBe(before);
  });

  it('changes a password, keeping the id', async () => {
    const id = new UserStore(usersFile).findByName('alice')!.id;
    const { code, stdout } = await runCli(['user', 'passwd', 'alice'], env, 'the new password\n');
    expect(code).toBe(0);
    expect(stdout).toContain('Changed the password of alice');
    const store = new UserStore(usersFile);
    expect((await store.authenticate('alice', 'the new password'))?.id).toBe(id);
    expect(await store.authenticate('alice', 'a very secret password')).toBeUndefined();
    expect((await runCli(['user', 'passwd', 'nobody'], env, 'whatever password\n')).stderr).toContain('no user named');
  });

  it('removes a user', async () => {
    const { code, stdout } = await runCli(['user', 'remove', 'alice'], env);
    expect(code).toBe(0);
    expect(stdout).toContain('Removed user alice');
    expect(new UserStore(usersFile).list()).toEqual([]);
    const again = await runCli(['user', 'remove', 'alice'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('NOT_FOUND');
  });
});
