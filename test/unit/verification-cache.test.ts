import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueAccessToken } from '../../src/auth/authorization-server/access-token.js';
import { localKeyResolver } from '../../src/auth/resource-server/local-key-resolver.js';
import { SIGNING_ALG, StateFile } from '../../src/auth/authorization-server/state-file.js';
import { createJwtVerifier, TokenError, type TokenVerifier } from '../../src/auth/resource-server/token-verifier.js';
import { withVerificationCache } from '../../src/auth/resource-server/verification-cache.js';

const ISSUER = 'http://127.0.0.1:8787';
const AUDIENCE = `${ISSUER}/mcp`;

describe('verification cache', () => {
  let dir: string;
  let stateFile: StateFile;
  let calls: number;
  let inner: TokenVerifier;
  let clock: number;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'verification-cache-'));
    stateFile = new StateFile(join(dir, 'oauth-as.ini'));
    await stateFile.current();
    const real = createJwtVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      subjectClaim: 'sub',
      getKey: localKeyResolver(async () => (await stateFile.current()).signingKey),
      algorithms: [SIGNING_ALG],
      requireAccessTokenType: true,
    });
    calls = 0;
    inner = {
      verify: (token) => {
        calls++;
        return real.verify(token);
      },
    };
    clock = Date.now();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const token = (subject: string, ttlSeconds = 3600) =>
    issueAccessToken(stateFile, { issuer: ISSUER, audience: AUDIENCE, subject, scope: 'memory:read', ttlSeconds });
  const cached = (options: Parameters<typeof withVerificationCache>[1] = {}) =>
    withVerificationCache(inner, { keyGeneration: async () => (await stateFile.current()).signingKey.kid, now: () => clock, ...options });

  it('checks a token once and reuses the verdict for the same token only', async () => {
    const verifier = cached();
    const alice = await token('alice');
    expect((await verifier.verify(alice)).subject).toBe('alice');
    expect((await verifier.verify(alice)).subject).toBe('alice');
    expect(calls).toBe(1);
    expect((await verifier.verify(await token('bob'))).subject).toBe('bob');
    expect(calls).toBe(2);
    // A token differing in one character of its signature is checked, and refused. Not the last characters: the
    // last one's low bits are padding, so "…BA" and "…BB" can decode to the same signature (a flake once in ~250).
    const at = alice.length - 10;
    const tampered = `${alice.slice(0, at)}${alice[at] === 'A' ? 'B' : 'A'}${alice.slice(at + 1)}`;
    await expect(verifier.verify(tampered)).rejects.toBeInstanceOf(TokenError);
  });

  it('never gives one token the verdict of another that ends in the same characters', async () => {
    const verifier = cached();
    const alice = await token('alice');
    expect((await verifier.verify(alice)).subject).toBe('alice');
    // Same signature, another payload: the map key (the token's end) matches, the token does not.
    const [header, , signature] = alice.split('.');
    const forged = `${header}.${Buffer.from(JSON.stringify({ sub: 'mallory' })).toString('base64url')}.${signature}`;
    await expect(verifier.verify(forged)).rejects.toBeInstanceOf(TokenError);
    expect(calls).toBe(2);
    // Alice's verdict is still reused.
    expect((await verifier.verify(alice)).subject).toBe('alice');
    expect(calls).toBe(2);
  });

  it('answers a reused verdict at once, without a promise, when the key generation is known without a check', async () => {
    const watched = withVerificationCache(inner, { keyGeneration: () => stateFile.currentKeyId() });
    const alice = await token('alice');
    const first = watched.verify(alice);
    expect(first).toBeInstanceOf(Promise);
    expect((await first).subject).toBe('alice');
    const again = watched.verify(alice);
    expect(again).not.toBeInstanceOf(Promise);
    expect((again as Awaited<typeof first>).subject).toBe('alice');
    expect(calls).toBe(1);
    // Replaced keys: the watch makes the next check read the file, and the old verdict is not reused.
    rmSync(join(dir, 'oauth-as.ini'));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await expect(Promise.resolve(watched.verify(alice))).rejects.toThrow(/unknown signing key/);
    stateFile.close();
  });

  it('never caches a refusal', async () => {
    const verifier = cached();
    await expect(verifier.verify('not-a-jwt')).rejects.toBeInstanceOf(TokenError);
    await expect(verifier.verify('not-a-jwt')).rejects.toBeInstanceOf(TokenError);
    expect(calls).toBe(2);
  });

  it('refuses a cached token at once when the state file is deleted (new keys)', async () => {
    const verifier = cached();
    const alice = await token('alice');
    await verifier.verify(alice);
    rmSync(join(dir, 'oauth-as.ini'));
    await expect(verifier.verify(alice)).rejects.toThrow(/unknown signing key/);
  });

  it('checks again after maxAge, and never reuses a verdict past the token expiry', async () => {
    const verifier = cached({ maxAgeMs: 60_000 });
    const long = await token('long');
    await verifier.verify(long);
    clock += 59_000;
    await verifier.verify(long);
    expect(calls).toBe(1);
    clock += 2_000;
    await verifier.verify(long);
    expect(calls).toBe(2);

    const short = await token('short', 20);
    await verifier.verify(short);
    clock += 21_000;
    await Promise.resolve(verifier.verify(short)).catch(() => undefined);
    expect(calls).toBe(4);
  });

  it('forgets the least recently used token beyond maxEntries', async () => {
    const verifier = cached({ maxEntries: 2 });
    const [a, b, c] = await Promise.all([token('a'), token('b'), token('c')]);
    await verifier.verify(a);
    await verifier.verify(b);
    await verifier.verify(a); // a is now the most recently used
    await verifier.verify(c); // evicts b
    expect(calls).toBe(3);
    await verifier.verify(a);
    expect(calls).toBe(3);
    await verifier.verify(b);
    expect(calls).toBe(4);
  });
});
