import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
