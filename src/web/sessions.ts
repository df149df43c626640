import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DatabaseHandle } from '../db/open-database.js';
import { deleteWebSession, insertWebSession, pruneWebSessions, useWebSession } from '../db/web-sessions.js';

/** A signed-in person, as every page request sees it. */
export interface Session {
  readonly subject: string;
  readonly scopes: readonly string[];
  /** The membership claim's values of the sign-in's token: spaces shared with a group reach the page too. */
  readonly groups: readonly string[];
  readonly createdAt: Date;
  /** The token every form of this session carries. */
  readonly csrf: string;
  readonly idHash: string;
}

/** Signed out after this long without a request. */
export const SESSION_IDLE_SECONDS = 30 * 60;
/** Signed out this long after signing in, however active. */
export const SESSION_MAX_SECONDS = 12 * 60 * 60;
/** Sessions kept per person (devices, browsers); a sign-in beyond it ends the oldest. */
const SESSIONS_PER_SUBJECT = 20;
const SWEEP_LIMIT = 100;
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export interface WebSessionOptions {
  readonly db: DatabaseHandle;
  /** BaseUrl is https: cookies are Secure and `__Host-` prefixed. */
  readonly secure: boolean;
  readonly issuer: string;
  /**
   * The secret sessions are keyed with: the web client's secret. The built-in authorization server derives it
   * from its state file, so a new generation of that file ends every session, as it ends every token.
   */
  readonly secret: () => Promise<string>;
}

/**
 * Sessions in the database (web_sessions), reached by an HttpOnly, SameSite=Lax cookie holding 256 random
 * bits. The database keeps only an HMAC of that value, keyed by a key derived from the web client's secret;
 * the CSRF token is another HMAC of it, so nothing stored lets anyone forge a request.
 */
export class WebSessions {
  readonly #options: WebSessionOptions;
  readonly cookieName: string;
  /** Holds a sign-in in progress (state and PKCE verifier) between the redirect and the callback. */
  readonly signInCookieName: string;

  constructor(options: WebSessionOptions) {
    this.#options = options;
    const prefix = options.secure ? '__Host-' : '';
    this.cookieName = `${prefix}memory-session`;
    this.signInCookieName = `${prefix}memory-sign-in`;
  }

  /** Signs `subject` in: a new session row and its cookie; also tidies ended sessions away. */
  async start(reply: FastifyReply, subject: string, scopes: readonly string[], groups: readonly string[] = []): Promise<void> {
    const id = randomBytes(32).toString('base64url');
    const key = await this.#key();
    await this.#options.db.withoutSubject('starting a web session', async (trx) => {
      await insertWebSession(trx, { idHash: hash(key, id), subject, scopes, groups, expiresAt: new Date(Date.now() + SESSION_MAX_SECONDS * 1000) });
      await pruneWebSessions(trx, subject, { idleSeconds: SESSION_IDLE_SECONDS, keep: SESSIONS_PER_SUBJECT, limit: SWEEP_LIMIT });
    });
    this.setCookie(reply, this.cookieName, id, undefined);
  }

  /** The request's live session (marked as used now), or undefined. */
  async current(request: FastifyRequest): Promise<Session | undefined> {
    const id = request.cookies[this.cookieName];
    if (id === undefined || !SESSION_ID.test(id)) return undefined;
    const key = await this.#key();
    const idHash = hash(key, id);
    const found = await this.#options.db.withoutSubject('reading the web session', (trx) => useWebSession(trx, idHash, SESSION_IDLE_SECONDS));
    if (found === undefined) return undefined;
    return { ...found, csrf: csrfToken(key, id), idHash };
  }

  /** Signs out: the row goes, and the cookie. */
  async end(session: Session, reply: FastifyReply): Promise<void> {
    await this.#options.db.withoutSubject('ending the web session', (trx) => deleteWebSession(trx, session.idHash));
    this.clearCookie(reply, this.cookieName);
  }

  csrfValid(session: Session, presented: unknown): boolean {
    if (typeof presented !== 'string') return false;
    const expected = Buffer.from(session.csrf);
    const given = Buffer.from(presented);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  setCookie(reply: FastifyReply, name: string, value: string, maxAgeSeconds: number | undefined): void {
    reply.setCookie(name, value, {
      path: '/',
      httpOnly: true,
      sameSite: 'lax',
      secure: this.#options.secure,
      ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds }),
    });
  }

  clearCookie(reply: FastifyReply, name: string): void {
    reply.clearCookie(name, { path: '/', httpOnly: true, sameSite: 'lax', secure: this.#options.secure });
  }

  async #key(): Promise<Buffer> {
    return Buffer.from(hkdfSync('sha256', await this.#options.secret(), 'memory-service web sessions', this.#options.issuer, 32));
  }
}

const hash = (key: Buffer, id: string): string => createHmac('sha256', key).update(`session\u0000${id}`).digest('base64url');
const csrfToken = (key: Buffer, id: string): string => createHmac('sha256', key).update(`csrf\u0000${id}`).digest('base64url');
