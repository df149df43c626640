import { SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';
import { SIGNING_ALG, type StateFile } from './state-file.js';

export interface AccessTokenRequest {
  readonly issuer: string;
  readonly audience: string;
  readonly subject: string;
  readonly scope: string;
  readonly ttlSeconds: number;
  readonly clientId?: string | undefined;
}

/** An RFC 9068 JWT access token signed with the state file's key (`token issue`; tests and benchmarks). */
export async function issueAccessToken(stateFile: StateFile, request: AccessTokenRequest): Promise<string> {
  const { signingKey } = await stateFile.current();
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ scope: request.scope, ...(request.clientId ? { client_id: request.clientId } : {}) })
    .setProtectedHeader({ alg: SIGNING_ALG, kid: signingKey.kid, typ: 'at+jwt' })
    .setIssuer(request.issuer)
    .setAudience(request.audience)
    .setSubject(request.subject)
    .setIssuedAt(now)
    .setExpirationTime(now + request.ttlSeconds)
    .setJti(randomUUID())
    .sign(signingKey.privateKey);
}
