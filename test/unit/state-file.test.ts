import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { derivedKey, StateFile } from '../../src/auth/authorization-server/state-file.js';

describe('the state file', () => {
  const dirs: string[] = [];
  const path = () => {
    const dir = mkdtempSync(join(tmpdir(), 'memory-service-state-'));
    dirs.push(dir);
    return join(dir, 'nested', 'oauth-as.ini');
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('is created once when several processes start together: all of them use the file that won', async () => {
    const file = path();
    const states = await Promise.all(Array.from({ length: 8 }, () => new StateFile(file).current()));
    expect(new Set(states.map((state) => state.generation)).size).toBe(1);
    expect(new Set(states.map((state) => state.signingKey.kid)).size).toBe(1);
    expect(readFileSync(file, 'utf8')).toContain(`generation=${states[0]!.generation}`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // No temporary file is left behind by the losers.
    expect(readdirSync(join(file, '..'))).toEqual(['oauth-as.ini']);
  });

  it('holds the generation and the key only, never a client or token', async () => {
    const file = path();
    await new StateFile(file).current();
    const keys = readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith(';'))
      .map((line) => line.split('=')[0]);
    expect(keys).toEqual(['generation', 'created_at', 'signing_kid', 'signing_alg', 'signing_private_jwk']);
  });

  it('derives the same keys in every process sharing the file, and new ones for a new generation', async () => {
    const file = path();
    const one = await new StateFile(file).current();
    const other = await new StateFile(file).current();
    expect(derivedKey(one, 'cookie signing').equals(derivedKey(other, 'cookie signing'))).toBe(true);
    expect(derivedKey(one, 'cookie signing').equals(derivedKey(one, 'sign-in form csrf'))).toBe(false);
    expect(derivedKey(one, 'cookie signing')).toHaveLength(32);
    rmSync(file);
    const next = await new StateFile(file).current();
    expect(next.generation).not.toBe(one.generation);
    expect(derivedKey(next, 'cookie signing').equals(derivedKey(one, 'cookie signing'))).toBe(false);
  });

  it('reads the sections an earlier version kept, and drops them keeping the generation and key', async () => {
    const file = path();
    const stateFile = new StateFile(file);
    const state = await stateFile.current();
    appendFileSync(file, '\n[oauth_clients]\nabc=def\n');
    const reread = await stateFile.current();
    expect(reread.legacySections).toEqual({ oauth_clients: { abc: 'def' } });
    await stateFile.dropLegacySections();
    expect(readFileSync(file, 'utf8')).not.toContain('oauth_clients');
    const after = await new StateFile(file).current();
    expect(after.generation).toBe(state.generation);
    expect(after.signingKey.kid).toBe(state.signingKey.kid);
    expect(after.legacySections).toEqual({});
  });

  it('starts a new generation when the file is replaced by something else', async () => {
    const file = path();
    const stateFile = new StateFile(file);
    const first = await stateFile.current();
    writeFileSync(file, 'not a state file\n');
    const next = await stateFile.current();
    expect(next.generation).not.toBe(first.generation);
  });
});

describe('the state file as token verification sees it (watched)', () => {
  const dirs: string[] = [];
  const stateFiles: StateFile[] = [];
  const watched = () => {
    const dir = mkdtempSync(join(tmpdir(), 'memory-service-state-'));
    dirs.push(dir);
    const stateFile = new StateFile(join(dir, 'keys', 'oauth-as.ini'));
    stateFiles.push(stateFile);
    return { dir, stateFile };
  };
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  afterEach(() => {
    for (const stateFile of stateFiles.splice(0)) stateFile.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('sees the file deleted or overwritten by the next turn of the event loop (before any request that arrives later)', async () => {
    const { stateFile } = watched();
    const first = await stateFile.currentWatched();
    expect(await stateFile.currentWatched()).toBe(first);

    rmSync(stateFile.path);
    await nextTurn();
    const second = await stateFile.currentWatched();
    expect(second.generation).not.toBe(first.generation);

    writeFileSync(stateFile.path, '; replaced by a redeploy\n');
    await nextTurn();
    const third = await stateFile.currentWatched();
    expect(third.generation).not.toBe(second.generation);
    expect(await stateFile.current()).toBe(third);
  });

  it('sees within a second a change its watch cannot see (the folder replaced)', async () => {
    const { dir, stateFile } = watched();
    const first = await stateFile.currentWatched();
    // Another file in a new folder moved into place: the watch follows the old folder.
    const other = new StateFile(join(dir, 'new-keys', 'oauth-as.ini'));
    const replacement = await other.current();
    renameSync(join(dir, 'keys'), join(dir, 'old-keys'));
    renameSync(join(dir, 'new-keys'), join(dir, 'keys'));
    const started = Date.now();
    while ((await stateFile.currentWatched()).generation === first.generation) {
      expect(Date.now() - started).toBeLessThan(2_000);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect((await stateFile.currentWatched()).generation).toBe(replacement.generation);
  });
});

describe('a state file that cannot be used', () => {
  const dirs: string[] = [];
  const directory = () => {
    const dir = mkdtempSync(join(tmpdir(), 'memory-service-state-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('counts as replaced when it parses but holds an invalid key: a new generation, written in its place', async () => {
    const file = join(directory(), 'oauth-as.ini');
    const stateFile = new StateFile(file);
    const first = await stateFile.current();
    const broken = readFileSync(file, 'utf8').replace(/^signing_private_jwk=.*$/m, `signing_private_jwk=${Buffer.from('{"kty":"EC","crv":"P-256","d":"AAAA","x":"AAAA","y":"AAAA"}').toString('base64url')}`);
    writeFileSync(file, broken);
    const next = await stateFile.current();
    expect(next.generation).not.toBe(first.generation);
    expect((await new StateFile(file).current()).generation).toBe(next.generation);
  });

  it('refuses the start, naming the path and why, when a directory is in its place', async () => {
    const file = join(directory(), 'oauth-as.ini');
    mkdirSync(file);
    await expect(new StateFile(file).open()).rejects.toThrow(`OAuthAsIniFile ${file} cannot be used: it is a directory`);
  });

  it('turned into a directory while serving: a new generation in memory, reported, and the file again once the path is free', async () => {
    const file = join(directory(), 'oauth-as.ini');
    const reports: string[] = [];
    const stateFile = new StateFile(file, { onUnusable: (reason) => reports.push(reason), unusableRetryMs: 50 });
    const first = await stateFile.open();
    rmSync(file);
    mkdirSync(file);
    const inMemory = await stateFile.current();
    expect(inMemory.generation).not.toBe(first.generation);
    expect(await stateFile.current()).toBe(inMemory);
    expect(reports).toEqual([`OAuthAsIniFile ${file} cannot be used (it is a directory); a new signing key is held in memory until it can`]);

    rmSync(file, { recursive: true });
    await new Promise((resolve) => setTimeout(resolve, 60));
    const restored = await stateFile.current();
    expect(restored.generation).not.toBe(inMemory.generation);
    expect((await new StateFile(file).current()).generation).toBe(restored.generation);
  });

  const root = process.getuid?.() === 0;
  it.runIf(root)('on a full disk: the file in place is never truncated, no partial file is left, and it is written once space is back', async () => {
    const mountPoint = directory();
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mountPoint]);
    try {
      const file = join(mountPoint, 'oauth-as.ini');
      const reports: string[] = [];
      const stateFile = new StateFile(file, { onUnusable: (reason) => reports.push(reason), unusableRetryMs: 50 });
      await stateFile.open();
      // Not our state any more: replacing it needs space, and there is none.
      writeFileSync(file, 'not a state file\n');
      fillDisk(join(mountPoint, 'filler'));

      const inMemory = await stateFile.current();
      expect(readFileSync(file, 'utf8')).toBe('not a state file\n');
      expect(readdirSync(mountPoint).sort()).toEqual(['filler', 'oauth-as.ini']);
      expect(reports).toEqual([`OAuthAsIniFile ${file} cannot be used (the disk is full); a new signing key is held in memory until it can`]);

      rmSync(join(mountPoint, 'filler'));
      await new Promise((resolve) => setTimeout(resolve, 60));
      const written = await stateFile.current();
      expect(written.generation).not.toBe(inMemory.generation);
      expect((await new StateFile(file).current()).generation).toBe(written.generation);
      expect(readdirSync(mountPoint)).toEqual(['oauth-as.ini']);
    } finally {
      execFileSync('umount', [mountPoint]);
    }
  });
});

/** Writes until the file system refuses: the last, partial write stays, so not one more byte fits. */
function fillDisk(path: string): void {
  const chunk = Buffer.alloc(4096, 1);
  try {
    for (;;) appendFileSync(path, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  }
  try {
    for (;;) appendFileSync(path, 'x');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  }
}
