import { decodeJwt } from 'jose';
import type { DatabaseHandle } from '../../db/open-database.js';
import { destroyObjectsOfAccount } from '../../db/oauth/oauth-objects.js';
import { TokenError, type TokenVerifier } from '../resource-server/token-verifier.js';
import { hashId } from './oauth-store.js';
import type { UserStore } from './user-store.js';

/**
 * Ending what a person holds at the built-in authorization server: one browser's sign-in (the page's "Sign out"),
 * or everything (the page's "Delete all my data"). Access tokens are JWTs nobody stores, so revoking them is a
 * time in the users file before which this subject's tokens are refused (see `refusingRevoked`).
 */
export class AccountRevocation {
  readonly #db: DatabaseHandle;
  readonly #users: UserStore;
  #revisions = 0;

  constructor(db: DatabaseHandle, users: UserStore) {
    this.#db = db;
    this.#users = users;
  }

  /** Bumped by every revocation in this process, so cached token verdicts are reached again (see compose.ts). */
  get revision(): number {
    return this.#revisions;
  }

  /** Ends the sign-in session a browser's cookie names, if it is `subject`'s: the next client it connects asks for the password. */
  async endSession(subject: string, sessionCookie: string | undefined): Promise<void> {
    if (sessionCookie === undefined || sessionCookie === '') return;
    await this.#db.withAuthorizationServer('ending a sign-in session', (trx) => destroyObjectsOfAccount(trx, subject, hashId(sessionCookie)));
  }

  /** Every session, grant, code and refresh token of `subject` deleted, and every access token issued until now refused. */
  async revokeEverything(subject: string): Promise<void> {
    // The file first: from then on every token of the subject is refused, whatever the database holds.
    this.#users.revokeTokens(subject);
    this.#revisions += 1;
    await this.#db.withAuthorizationServer('revoking every grant of a person', (trx) => destroyObjectsOfAccount(trx, subject));
  }
}

/**
 * Refuses an access token issued before its subject's tokens were revoked (in whole seconds: a token of the same
 * second as the revocation is refused too). Subjects that are not users (`token issue`) pass.
 */
export function refusingRevoked(inner: TokenVerifier, users: UserStore): TokenVerifier {
  const check = (token: string, auth: Awaited<ReturnType<TokenVerifier['verify']>>) => {
    const user = users.findById(auth.subject);
    if (user?.tokensRevokedAt === undefined) return auth;
    const issuedAt = decodeJwt(token).iat;
    if (issuedAt === undefined || issuedAt <= Math.floor(Date.parse(user.tokensRevokedAt) / 1000)) throw new TokenError('token revoked');
    return auth;
  };
  return {
    async verify(token) {
      return check(token, await inner.verify(token));
    },
  };
}
