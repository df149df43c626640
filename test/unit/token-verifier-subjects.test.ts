import { generateKeyPair, SignJWT, createLocalJWKSet, exportJWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { createJwtVerifier } from '../../src/auth/resource-server/token-verifier.js';

/**
 * The subject rules hold for an external authorization server too (same verifier, a JWKS, any claim):
 * here the owner is taken from `preferred_username`, as OAuthSubjectClaim allows.
 */
const ISSUER = 'https://login.example.com/realms/memory';
const AUDIENCE = 'https://memory.example.com/mcp';

async function setUp() {
  const { privateKey, publicKey } = await generateKeyPair('ES384');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES384' };
  const verifier = createJwtVerifier({
    issuer: ISSUER,
    audience: AUDIENCE,
    subjectClaim: 'preferred_username',
    getKey: createLocalJWKSet({ keys: [jwk] }),
    algorithms: ['ES384'],
    requireAccessTokenType: false,
  });
  const token = (claims: Record<string, unknown>) =>
    new SignJWT(claims).setProtectedHeader({ alg: 'ES384', kid: 'k1' }).setIssuer(ISSUER).setAudience(AUDIENCE).setIssuedAt().setExpirationTime('10m').sign(privateKey);
  return { verifier, token };
}

describe('subject rules on an external issuer\'s token, with OAuthSubjectClaim = preferred_username', () => {
  it.each([
    ['*', '"preferred_username" claim "*" is reserved'],
    ['\uD800x', '"preferred_username" claim is not valid Unicode'],
    ['bob\u0000', '"preferred_username" claim contains control characters'],
    ['b'.repeat(256), '"preferred_username" claim is longer than 255 bytes'],
  ])('refuses %j naming the claim', async (value, problem) => {
    const { verifier, token } = await setUp();
    await expect(verifier.verify(await token({ sub: 'fine', preferred_username: value }))).rejects.toMatchObject({
      description: `subject not accepted: ${problem}`,
    });
  });

  it('accepts an ordinary value, whatever the sub', async () => {
    const { verifier, token } = await setUp();
    await expect(verifier.verify(await token({ sub: '*', preferred_username: 'zoë.ångström' }))).resolves.toMatchObject({ subject: 'zoë.ångström' });
  });
});
