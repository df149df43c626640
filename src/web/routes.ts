import { parse as parseQuery } from 'node:querystring';
import { Readable } from 'node:stream';
import cookie from '@fastify/cookie';
import multipart from '@fastify/multipart';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { z } from 'zod';
import { forbidden, invalidInput, isServiceError, notFound, type ServiceError } from '../errors.js';
import type { HostCheck } from '../http/origin.js';
import type { RateLimit } from '../http/rate-limit.js';
import type { Logger } from '../logger.js';
import { describeZodError } from '../mcp/tool.js';
import { NO_FILTERS } from '../memory/filters.js';
import type { MemoryService } from '../memory/memory-service.js';
import { canonicalTags } from '../memory/tags.js';
import type { Memory, MemoryFilters } from '../memory/types.js';
import type { SpaceDetails, SpaceService } from '../spaces/space-service.js';
import { PERSONAL_SPACE_ID, type AccessibleSpace, type Principal, type SpaceRef } from '../spaces/spaces.js';
import { decodeCursor, encodeCursor } from '../tools/list-cursor.js';
import { correctInput } from '../tools/correct.js';
import { REASON_CHARS } from '../tools/forget.js';
import { optionalString } from '../tools/arguments.js';
import { RECALL_LIMITS } from '../tools/recall.js';
import { exportLines } from '../transfer/export-format.js';
import { importFile } from '../transfer/import-file.js';
import { ImportSlots } from '../transfer/import-slots.js';
import { STYLESHEET, STYLESHEET_PATH } from './assets.js';
import type { AuthInfo, TokenVerifier } from '../auth/resource-server/token-verifier.js';
import { inProcessFetch } from './in-process-fetch.js';
import { RelyingParty, SignInError, type PendingSignIn, type SignInClient } from './sign-in.js';
import type { Session, WebSessions } from './sessions.js';
import {
  dataPage,
  deletePage,
  historyPage,
  importSummaryPage,
  inSpace,
  memoriesPage,
  memoryPage,
  messagePage,
  spaceDeletePage,
  spacePage,
  spacesPage,
  welcomePage,
  withIdentity,
} from './views.js';

/** Who a page request acts for: the person, with the groups of the token they signed in with. */
const callerOf = (session: Session): Principal => (session.groups.length === 0 ? { subject: session.subject } : { subject: session.subject, groups: session.groups });

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in person of a page request (set by the web page's preHandler). */
    webSession?: Session;
    /** How the page names that person ("Signed in as …"). */
    webIdentity?: string;
  }
  interface FastifyContextConfig {
    /**
     * The route reads a file from a multipart body and checks the form's CSRF token itself, before the file (as
     * POST /data/import does). Every other state-changing route takes only url-encoded forms, checked before its handler.
     */
    webFileUpload?: boolean;
  }
}

/** Headers of every page: no scripts at all, no framing, no caching of personal pages, no referrer. */
export const WEB_PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cache-control': 'no-store',
};

const PAGE_SIZE = 20;
const SEARCH_LIMIT = 20;
/** Longer than any stored text (MaxTextChars is at most 1,000,000): the page shows whole texts. */
const WHOLE_TEXTS = 1_000_000;
const TAG_CHOICES = 50;
const IMPORT_BATCH = 64;
/** Imports the page runs at once (one per person); see ImportSlots. */
const IMPORTS_AT_ONCE = 2;
/** Lines one imported file may have: a 10 MB memory.jsonl of relations has about 120,000. */
const IMPORT_MAX_LINES = 250_000;
const SIGN_IN_SECONDS = 10 * 60;

/** Where the authorization server sends the browser back: `{BaseUrl}` + this. */
export const WEB_CALLBACK_PATH = '/auth/callback';

export type WebSignIn =
  | {
      readonly on: true;
      /** `inProcess`: the built-in authorization server, asked through this application rather than over the network. */
      readonly client: Omit<SignInClient, 'fetch'> & { readonly inProcess: boolean };
      readonly verifier: TokenVerifier;
      readonly sessions: WebSessions;
    }
  | { readonly on: false; readonly reason: string };

export interface WebPageOptions {
  readonly baseUrl: string;
  /** `{BaseUrl}/mcp`, the resource the page's token is for. */
  readonly resource: string;
  readonly memory: MemoryService;
  readonly spaces: SpaceService;
  /** OAuthMembershipClaim: when set, an owner may link a space to a group of the external server. */
  readonly membershipClaim?: string | undefined;
  readonly signIn: WebSignIn;
  readonly maxTextChars: number;
  readonly maxBodyBytes: number;
  /** WebImportMaxBytes: the largest file the page imports. */
  readonly importMaxBytes: number;
  /**
   * Whether the person behind a session may still sign in (the built-in server: the user exists and has not
   * changed the password since); undefined: always, until the session ends.
   */
  readonly accountActive?: ((subject: string, signedInAt: Date) => boolean) | undefined;
  /** The name the page shows for a subject (the built-in server's user name); undefined: the subject itself. */
  readonly accountName?: ((subject: string) => string | undefined) | undefined;
  /**
   * Ends the authorization server's own sign-in in this browser (its session cookie), so that signing out of the
   * page leaves no one able to connect a client here without the password. Undefined for an external server.
   */
  readonly endAuthorizationSession?: ((request: FastifyRequest, subject: string) => Promise<void>) | undefined;
  /** Revokes every grant, refresh token, access token and authorization-server session of a subject ("delete all"). */
  readonly revokeSubject?: ((subject: string) => Promise<void>) | undefined;
  /** DNS-rebinding protection on a loopback listener, as for /mcp. */
  readonly hostAllowed?: HostCheck | undefined;
  /** A per-address limit for the sign-in endpoints (anyone can call them). */
  readonly perAddressLimit: onRequestHookHandler;
  /** A per-person limit for everything else; undefined = none. */
  readonly perSubjectLimit?: RateLimit | undefined;
  readonly logger: Logger;
}

type Form = Record<string, string | string[] | undefined>;

/**
 * The person's own page at `{BaseUrl}/` (see views.ts for the screens): server-rendered HTML calling the memory
 * service directly with the signed-in subject. Off, with a page saying why, when no sign-in is possible.
 */
export async function webRoutes(app: FastifyInstance, options: WebPageOptions): Promise<void> {
  await app.register(cookie);
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: options.maxBodyBytes }, (_request, body, done) => {
    done(null, parseQuery(body as string));
  });
  await app.register(multipart, {
    limits: { fileSize: options.importMaxBytes, files: 1, fields: 3, fieldSize: 1024, parts: 4, headerPairs: 100 },
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.headers(WEB_PAGE_HEADERS);
    if (options.hostAllowed !== undefined && !options.hostAllowed(request.headers.host, request.socket.localPort)) {
      return reply.code(403).type('text/plain; charset=utf-8').send('Forbidden: Host not allowed');
    }
    return undefined;
  });
  app.setErrorHandler((error: FastifyError, request, reply) => renderError(error, request, reply, options.logger));

  app.get(STYLESHEET_PATH, (_request, reply) =>
    reply.header('cache-control', 'public, max-age=31536000, immutable').type('text/css; charset=utf-8').send(STYLESHEET),
  );

  const { signIn } = options;
  if (!signIn.on) {
    app.get('/', (_request, reply) =>
      page(reply, 404, messagePage('The page is off', `This service's web page is not enabled: ${signIn.reason}`, { href: '/.well-known/oauth-protected-resource/mcp', label: 'Service metadata' })),
    );
    return;
  }
  const { sessions } = signIn;
  const relyingParty = new RelyingParty({
    client: { ...signIn.client, fetch: signIn.client.inProcess ? inProcessFetch(app) : undefined },
    redirectUri: `${options.baseUrl}${WEB_CALLBACK_PATH}`,
    resource: options.resource,
    verifier: signIn.verifier,
  });

  const signedIn = async (request: FastifyRequest): Promise<Session | undefined> => {
    const session = await sessions.current(request);
    if (session === undefined) return undefined;
    return options.accountActive === undefined || options.accountActive(session.subject, session.createdAt) ? session : undefined;
  };

  await app.register(async (scope) => {
    scope.get<{ Querystring: { next?: string } }>('/auth/sign-in', { onRequest: options.perAddressLimit }, async (request, reply) => {
      const next = localPath(request.query.next);
      if ((await signedIn(request)) !== undefined) return reply.redirect(next, 303);
      const { url, pending } = await relyingParty.begin(next);
      sessions.setCookie(reply, sessions.signInCookieName, Buffer.from(JSON.stringify(pending)).toString('base64url'), SIGN_IN_SECONDS);
      return reply.redirect(url.href, 303);
    });

    scope.get(WEB_CALLBACK_PATH, { onRequest: options.perAddressLimit }, async (request, reply) => {
      const pending = readPending(request.cookies[sessions.signInCookieName]);
      sessions.clearCookie(reply, sessions.signInCookieName);
      const query = new URL(request.url, 'http://callback').search;
      if (pending === undefined || new URLSearchParams(query).get('state') !== pending.state) {
        return page(
          reply,
          400,
          messagePage('Sign-in expired', 'This sign-in has expired or was started in another browser. Sign in again.', { href: '/auth/sign-in', label: 'Sign in' }),
        );
      }
      const auth: AuthInfo = await relyingParty.complete(query, pending);
      if (!auth.scopes.includes('memory:read')) {
        throw new SignInError(403, 'the authorization server did not grant memory:read, which the page needs to show your memories');
      }
      // A new session id at every sign-in: a session cookie planted before it (by a same-site page) ends here.
      const planted = await sessions.current(request);
      if (planted !== undefined) await sessions.end(planted, reply);
      await sessions.start(reply, auth.subject, auth.scopes, auth.groups ?? []);
      return reply.redirect(pending.next, 303);
    });
  });

  await app.register(async (scope) => {
    scope.addHook('preHandler', async (request, reply) => {
      const session = await signedIn(request);
      if (session === undefined) {
        if (request.url === '/' || request.url.startsWith('/?')) return page(reply, 200, welcomePage(welcomeNotice(request.url)));
        if (request.method === 'GET') return reply.redirect(`/auth/sign-in?next=${encodeURIComponent(localPath(request.url))}`, 303);
        return page(reply, 401, messagePage('Signed out', 'Your session has ended, so this was not done. Sign in and try again.', { href: '/auth/sign-in', label: 'Sign in' }));
      }
      request.webSession = session;
      request.webIdentity = options.accountName?.(session.subject) ?? session.subject;
      const refused = options.perSubjectLimit?.(request, reply);
      if (refused !== undefined) throw refused;
      const changes = request.method !== 'GET' && request.method !== 'HEAD';
      if (changes) {
        const refusal = formRefusal(request, session, sessions);
        if (refusal !== undefined) return page(reply, refusal.status, messagePage('Request refused', refusal.message, { href: '/', label: 'Your memories' }, session.csrf));
      }
      const needed = changes ? 'memory:write' : 'memory:read';
      if (!session.scopes.includes(needed)) {
        return page(reply, 403, messagePage('Not allowed', `Your sign-in does not include ${needed}, which this needs.`, { href: '/', label: 'Your memories' }, session.csrf));
      }
      return undefined;
    });

    routesForSignedIn(scope, options, sessions);
  });
}

function routesForSignedIn(scope: FastifyInstance, options: WebPageOptions, sessions: WebSessions): void {
  const { memory } = options;
  const who = (request: FastifyRequest): Session => request.webSession!;
  const importSlots = new ImportSlots(IMPORTS_AT_ONCE);

  /**
   * The space a screen or form acts on (`space`, from the query or the form; personal when absent) among the
   * person's spaces: an id they are not a member of, or anything but an id, is NOT_FOUND, as an unknown space is.
   * The service checks the space again in the database (row-level security); this is for the screen.
   */
  const spaceOf = async (session: Session, given: unknown): Promise<{ space: AccessibleSpace; spaces: AccessibleSpace[] }> => {
    const id = given === undefined || given === '' ? PERSONAL_SPACE_ID : given;
    const spaces = await options.spaces.list(callerOf(session));
    const space = typeof id === 'string' ? spaces.find((candidate) => candidate.id === id) : undefined;
    if (space === undefined) throw notFound('space');
    return { space, spaces };
  };
  /** The space a memory is in, with the person's role there. */
  const spaceOfMemory = async (session: Session, found: Memory): Promise<AccessibleSpace> => (await spaceOf(session, found.space.id)).space;

  scope.get<{ Querystring: { q?: string; tag?: string; after?: string; done?: string; id?: string; space?: string } }>('/', async (request, reply) => {
    const session = who(request);
    const { space, spaces } = await spaceOf(session, request.query.space);
    const query = (request.query.q ?? '').trim();
    const tagInput = (request.query.tag ?? '').trim();
    let error: string | undefined;
    let tag = '';
    try {
      tag = tagInput === '' ? '' : (canonicalTags([tagInput])[0] ?? '');
    } catch (problem) {
      error = `Tag: ${(problem as Error).message}`;
    }
    const filters: MemoryFilters = { ...NO_FILTERS, tags: tag === '' ? [] : [tag] };
    const after = request.query.after === undefined ? undefined : decodeCursor(request.query.after);
    const tags = await memory.tags(callerOf(session), TAG_CHOICES, space.id);
    const view = { csrf: session.csrf, space, spaces, tags, query, tag, notice: doneNotice(request.query.done, request.query.id), error };
    if (query !== '') {
      if ([...query].length > RECALL_LIMITS.queryChars) {
        return page(reply, 400, memoriesPage({ ...view, memories: [], nextHref: undefined, firstPage: true, error: `Search: at most ${RECALL_LIMITS.queryChars} characters` }));
      }
      const found = await memory.recall(callerOf(session), { query, limit: SEARCH_LIMIT, maxChars: WHOLE_TEXTS, filters, spaces: [space.id] });
      return page(reply, 200, memoriesPage({ ...view, memories: found.memories, nextHref: undefined, firstPage: true }));
    }
    const listed = await memory.list(callerOf(session), { limit: PAGE_SIZE, maxChars: WHOLE_TEXTS, after, includeExpired: true, filters, space: space.id });
    const nextHref = listed.next === undefined ? undefined : inSpace('/', space, { ...(tag === '' ? {} : { tag }), after: encodeCursor(listed.next) });
    return page(reply, 200, memoriesPage({ ...view, memories: listed.memories, nextHref, firstPage: after === undefined }));
  });

  scope.get<{ Params: { id: string }; Querystring: { done?: string; id?: string } }>('/memories/:id', async (request, reply) => {
    const session = who(request);
    const found = await memory.get(callerOf(session), pathId(request.params.id));
    const space = await spaceOfMemory(session, found);
    return page(reply, 200, memoryPage({ csrf: session.csrf, memory: found, space, form: storedForm(found), notice: doneNotice(request.query.done, request.query.id) }));
  });

  scope.post<{ Params: { id: string }; Body: Form }>('/memories/:id/correct', async (request, reply) => {
    const session = who(request);
    const id = pathId(request.params.id);
    const old = await memory.get(callerOf(session), id);
    const space = await spaceOfMemory(session, old);
    const body = request.body;
    const form = { text: first(body, 'text') ?? '', tags: first(body, 'tags') ?? '', importance: first(body, 'importance') ?? '', reason: first(body, 'reason') ?? '' };
    const refuse = (message: string) => page(reply, 400, memoryPage({ csrf: session.csrf, memory: old, space, form, error: message }));
    const importance = form.importance.trim() === '' ? undefined : Number(form.importance);
    const parsed = correctInput(options.maxTextChars).safeParse({
      memory_id: id,
      text: form.text,
      tags: form.tags.split(',').map((tag) => tag.trim()).filter((tag) => tag !== ''),
      ...(importance === undefined ? {} : { importance }),
      ...(form.reason.trim() === '' ? {} : { reason: form.reason }),
    });
    if (!parsed.success) return refuse(describeZodError(parsed.error));
    const args = parsed.data;
    try {
      // What the form does not show is carried over: the tool would drop it, but a person editing the text did not mean to.
      const result = await memory.correct(callerOf(session), id, {
        text: args.text,
        tags: args.tags,
        importance: args.importance,
        sourceProvider: old.sourceProvider ?? undefined,
        captureMode: old.captureMode ?? undefined,
        sessionId: old.sessionId ?? undefined,
        expiresAt: old.expiresAt !== null && old.expiresAt > new Date() ? old.expiresAt : undefined,
        note: args.reason,
      });
      return reply.redirect(`/memories/${result.memoryId}?done=corrected&id=${id}`, 303);
    } catch (error) {
      if (isRefusal(error)) return refuse(fieldMessage(error, { note: 'Why it changed' }));
      throw error;
    }
  });

  scope.post<{ Params: { id: string }; Body: Form }>('/memories/:id/confirm', async (request, reply) => {
    const id = pathId(request.params.id);
    await memory.confirm(callerOf(who(request)), id);
    return reply.redirect(`/memories/${id}?done=confirmed`, 303);
  });

  scope.post<{ Params: { id: string }; Body: Form }>('/restatements/:id/separate', async (request, reply) => {
    const session = who(request);
    const separated = await memory.separateRestatement(callerOf(session), pathId(request.params.id));
    // Back to the list of the space it is in (a restatement names no space of its own).
    const { space } = await memory.get(callerOf(session), separated.memoryId);
    return reply.redirect(`${spaceHref('/', space, { done: 'separated', id: String(separated.memoryId) })}#memory-${separated.memoryId}`, 303);
  });

  const reasonField = optionalString(REASON_CHARS, 'Why.');
  scope.post<{ Params: { id: string }; Body: Form }>('/memories/:id/forget', async (request, reply) => {
    const session = who(request);
    const id = pathId(request.params.id);
    const reason = reasonField.safeParse(first(request.body, 'reason') || undefined);
    const refuse = async (message: string) => {
      const found = await memory.get(callerOf(session), id);
      return page(reply, 400, memoryPage({ csrf: session.csrf, memory: found, space: await spaceOfMemory(session, found), form: storedForm(found), error: message }));
    };
    if (!reason.success) return refuse(`Why: ${describeZodError(reason.error)}`);
    let forgotten: SpaceRef;
    try {
      forgotten = (await memory.forget(callerOf(session), id, reason.data)).space;
    } catch (error) {
      if (!isRefusal(error)) throw error;
      return refuse(fieldMessage(error, { note: 'Why' }));
    }
    return reply.redirect(spaceHref('/', forgotten, { done: 'forgotten', id: String(id) }), 303);
  });

  scope.get<{ Querystring: { after?: string; done?: string; id?: string; space?: string } }>('/history', async (request, reply) => {
    const session = who(request);
    const { space, spaces } = await spaceOf(session, request.query.space);
    const cursor = request.query.after === undefined ? undefined : decodeCursor(request.query.after);
    const after = cursor === undefined ? undefined : { tombstonedAt: cursor.createdAt, id: cursor.id };
    const result = await memory.tombstones(callerOf(session), { after, limit: PAGE_SIZE, space: space.id });
    const next = result.next === undefined ? undefined : inSpace('/history', space, { after: encodeCursor({ createdAt: result.next.tombstonedAt, id: result.next.id }) });
    return page(
      reply,
      200,
      historyPage({ csrf: session.csrf, space, spaces, tombstones: result.tombstones, nextHref: next, firstPage: after === undefined, notice: doneNotice(request.query.done, request.query.id) }),
    );
  });

  scope.post<{ Params: { id: string }; Body: Form }>('/history/:id/erase', async (request, reply) => {
    const session = who(request);
    const id = pathId(request.params.id);
    const { space } = await spaceOf(session, first(request.body, 'space'));
    await memory.eraseTombstones(callerOf(session), id, space.id);
    return reply.redirect(inSpace('/history', space, { done: 'erased', id: String(id) }), 303);
  });

  scope.post<{ Body: Form }>('/history/erase', async (request, reply) => {
    const session = who(request);
    const { space, spaces } = await spaceOf(session, first(request.body, 'space'));
    if (first(request.body, 'confirm') !== 'yes') {
      const result = await memory.tombstones(callerOf(session), { after: undefined, limit: PAGE_SIZE, space: space.id });
      return page(reply, 400, historyPage({ csrf: session.csrf, space, spaces, tombstones: result.tombstones, nextHref: undefined, firstPage: true, error: 'Tick “Erase all of them” to confirm.' }));
    }
    const erased = await memory.eraseTombstones(callerOf(session), undefined, space.id);
    return reply.redirect(inSpace('/history', space, { done: 'erased-all', id: String(erased) }), 303);
  });

  scope.get<{ Querystring: { space?: string } }>('/data', async (request, reply) => {
    const session = who(request);
    const { space, spaces } = await spaceOf(session, request.query.space);
    return page(reply, 200, dataPage({ csrf: session.csrf, space, spaces, importMaxBytes: options.importMaxBytes, usage: space.personal ? await memory.usage(callerOf(session)) : undefined }));
  });

  scope.get<{ Querystring: { space?: string } }>('/data/export', async (request, reply) => {
    const session = who(request);
    // Resolved before the first byte: a space the person may not read is a 404 page, not a broken download.
    const { space } = await spaceOf(session, request.query.space);
    const day = new Date().toISOString().slice(0, 10);
    const named = space.personal ? '' : `-${space.id.slice('space:'.length)}`;
    return reply
      .header('content-type', 'application/jsonl; charset=utf-8')
      .header('content-disposition', `attachment; filename="memory-service-export${named}-${day}.jsonl"`)
      .send(Readable.from(exportLines(memory.exportRecords(callerOf(session), space.id))));
  });

  scope.post('/data/import', { config: { webFileUpload: true } }, async (request, reply) => {
    const session = who(request);
    let target = await spaceOf(session, undefined);
    const dataError = (status: number, error: string) =>
      page(reply, status, dataPage({ csrf: session.csrf, space: target.space, spaces: target.spaces, importMaxBytes: options.importMaxBytes, error }));
    const tooLarge = () =>
      dataError(413, `The file is larger than ${options.importMaxBytes} bytes, the most this page imports (WebImportMaxBytes). Nothing was imported. Import it with the command line (memory-service import) instead.`);
    const declared = Number(request.headers['content-length'] ?? 0);
    // The form adds a little around the file; anything far beyond the limit is refused before it is read.
    if (declared > options.importMaxBytes + 64 * 1024) return tooLarge();
    if (!request.isMultipart()) return dataError(400, 'Choose a file to import.');
    let csrfChecked = false;
    let spaceGiven: string | undefined;
    let spaceRefused: unknown;
    let file: Buffer | undefined;
    let busy: 'subject-busy' | 'process-busy' | undefined;
    let release: (() => void) | undefined;
    try {
      try {
        for await (const part of request.parts()) {
          if (part.type === 'field') {
            if (part.fieldname === 'csrf') csrfChecked = sessions.csrfValid(session, part.value);
            if (part.fieldname === 'space') spaceGiven = typeof part.value === 'string' ? part.value : '';
            continue;
          }
          // The token comes first in the form: a file is read only for a request this page sent.
          if (!csrfChecked || part.fieldname !== 'file' || file !== undefined || busy !== undefined || spaceRefused !== undefined) {
            part.file.resume();
            continue;
          }
          // The space comes before the file too: a space the person may not write to costs no read of the file.
          try {
            target = await spaceOf(session, spaceGiven);
            if (target.space.role === 'reader') throw forbidden(`you may read space "${target.space.name}" but not import into it (your role there is reader)`);
          } catch (error) {
            spaceRefused = error;
            part.file.resume();
            continue;
          }
          // A slot is taken before the file is read, so a refused import holds none of it.
          const slot = importSlots.take(session.subject);
          if (typeof slot === 'string') {
            busy = slot;
            part.file.resume();
            continue;
          }
          release = slot;
          file = await part.toBuffer();
        }
      } catch (error) {
        if ((error as FastifyError).code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge();
        throw error;
      }
      if (!csrfChecked) {
        return page(reply, 403, messagePage('Request refused', CSRF_REFUSED, { href: '/data', label: 'Your data' }, session.csrf));
      }
      if (spaceRefused !== undefined) throw spaceRefused;
      if (busy === 'subject-busy') {
        return dataError(409, 'An import of yours is already running: wait for it to finish, then import this file. Nothing was imported.');
      }
      if (busy === 'process-busy') {
        reply.header('retry-after', '60');
        return dataError(503, `The service is already running ${IMPORTS_AT_ONCE} imports, the most it runs at once: try again in a minute. Nothing was imported.`);
      }
      if (file === undefined || file.length === 0) return dataError(400, 'Choose a file to import (the one chosen is empty).');
      const summary = await importFile(memory, callerOf(session), [file], {
        maxTextChars: options.maxTextChars,
        maxLines: IMPORT_MAX_LINES,
        batchSize: IMPORT_BATCH,
        space: target.space.id,
      });
      return page(reply, importStatus(summary.stoppedBy?.code), importSummaryPage(session.csrf, summary, target.space));
    } finally {
      release?.();
    }
  });

  scope.get('/data/delete', async (request, reply) => {
    const session = who(request);
    return page(reply, 200, deletePage({ csrf: session.csrf, counts: await memory.counts(callerOf(session)) }));
  });

  scope.post<{ Body: Form }>('/data/delete', async (request, reply) => {
    const session = who(request);
    if ((first(request.body, 'confirm') ?? '').trim().toLowerCase() !== 'delete') {
      return page(reply, 400, deletePage({ csrf: session.csrf, counts: await memory.counts(callerOf(session)), error: 'Type “delete” to confirm. Nothing was deleted.' }));
    }
    // Tokens first: were the data erased first and this failed, a client could still write under a token thought gone.
    await options.revokeSubject?.(session.subject);
    await memory.eraseEverything(callerOf(session));
    sessions.clearCookie(reply, sessions.cookieName);
    return reply.redirect('/?deleted=1', 303);
  });

  spaceRoutes(scope, options, who);

  scope.post('/auth/sign-out', async (request, reply) => {
    const session = who(request);
    await options.endAuthorizationSession?.(request, session.subject);
    await sessions.end(session, reply);
    return reply.redirect('/?signed-out=1', 303);
  });
}

const SPACE_ID = /^space:[a-z0-9]{24}$/;

/** A shared space's id from the path; anything else is "not found", like a space of others. */
function pathSpaceId(value: string): string {
  if (!SPACE_ID.test(value)) throw Object.assign(new Error('not found'), { statusCode: 404 });
  return value;
}

/** `path` in the space a result names. */
const spaceHref = (path: string, space: SpaceRef, extra: Record<string, string>): string =>
  inSpace(path, { ...space, key: '', role: 'reader', personal: space.id === PERSONAL_SPACE_ID }, extra);

const MEMBER_ROLES = ['reader', 'writer'] as const;

function memberRole(value: string | undefined): (typeof MEMBER_ROLES)[number] {
  const role = MEMBER_ROLES.find((candidate) => candidate === value);
  if (role === undefined) throw invalidInput('choose a role: reader or writer');
  return role;
}

/**
 * Spaces, members and roles: `/spaces` lists them and makes one; `/spaces/:id` shows one, and its forms change it.
 * Every change is the SpaceService's (the database refuses what the person may not do, whatever this code does); a
 * refused change shows the space again with the reason, and nothing changed.
 */
function spaceRoutes(scope: FastifyInstance, options: WebPageOptions, who: (request: FastifyRequest) => Session): void {
  const { spaces } = options;
  const personLabel = options.accountName === undefined ? 'Person (their subject at the authorization server)' : 'User name';

  scope.get<{ Querystring: { done?: string } }>('/spaces', async (request, reply) => {
    const session = who(request);
    return page(reply, 200, spacesPage({ csrf: session.csrf, spaces: await spaces.list(callerOf(session)), notice: doneNotice(request.query.done, undefined) }));
  });

  scope.post<{ Body: Form }>('/spaces', async (request, reply) => {
    const session = who(request);
    const name = first(request.body, 'name') ?? '';
    try {
      const made = await spaces.create(callerOf(session), name);
      return reply.redirect(`/spaces/${made.id}?done=space-made`, 303);
    } catch (error) {
      if (!isRefusal(error)) throw error;
      return page(reply, 400, spacesPage({ csrf: session.csrf, spaces: await spaces.list(callerOf(session)), name, error: capitalised(error.message) }));
    }
  });

  scope.get<{ Params: { id: string }; Querystring: { done?: string } }>('/spaces/:id', async (request, reply) => {
    const session = who(request);
    const space = await spaces.details(callerOf(session), pathSpaceId(request.params.id));
    return page(reply, 200, spacePage({ csrf: session.csrf, space, groupClaim: options.membershipClaim, personLabel, notice: doneNotice(request.query.done, undefined) }));
  });

  /** A change to one space: done, then back to it (or `after`); refused, the space again with the reason. */
  const change = (path: string, act: (session: Session, space: SpaceDetails, body: Form) => Promise<string>) =>
    scope.post<{ Params: { id: string }; Body: Form }>(`/spaces/:id/${path}`, async (request, reply) => {
      const session = who(request);
      const space = await spaces.details(callerOf(session), pathSpaceId(request.params.id));
      try {
        return reply.redirect(await act(session, space, request.body), 303);
      } catch (error) {
        const status = refusedStatus(error);
        if (status === undefined) throw error;
        return page(reply, status, spacePage({ csrf: session.csrf, space, groupClaim: options.membershipClaim, personLabel, error: `Not done: ${(error as ServiceError).message}.` }));
      }
    });
  const member = (body: Form): string => first(body, 'member') ?? '';

  change('rename', async (session, space, body) => {
    await spaces.rename(callerOf(session), space.id, first(body, 'name') ?? '');
    return `/spaces/${space.id}?done=renamed`;
  });
  change('share', async (session, space, body) => {
    await spaces.share(callerOf(session), space.id, first(body, 'person') ?? '', memberRole(first(body, 'role')));
    return `/spaces/${space.id}?done=shared`;
  });
  change('members/role', async (session, space, body) => {
    await spaces.setRole(callerOf(session), space.id, member(body), memberRole(first(body, 'role')));
    return `/spaces/${space.id}?done=role-changed`;
  });
  change('members/remove', async (session, space, body) => {
    await spaces.removeMember(callerOf(session), space.id, member(body));
    return `/spaces/${space.id}?done=removed`;
  });
  change('transfer', async (session, space, body) => {
    await spaces.transfer(callerOf(session), space.id, member(body));
    return `/spaces/${space.id}?done=handed-on`;
  });
  change('group', async (session, space, body) => {
    if (options.membershipClaim === undefined) throw invalidInput('a group can be linked only when OAuthMembershipClaim is set');
    const group = (first(body, 'group') ?? '').trim();
    await spaces.setGroup(callerOf(session), space.id, group === '' ? undefined : { name: group, role: memberRole(first(body, 'role')) });
    return `/spaces/${space.id}?done=group`;
  });
  change('leave', async (session, space) => {
    await spaces.leave(callerOf(session), space.id);
    return '/spaces?done=left';
  });

  scope.get<{ Params: { id: string } }>('/spaces/:id/delete', async (request, reply) => {
    const session = who(request);
    const space = await spaces.details(callerOf(session), pathSpaceId(request.params.id));
    if (space.role !== 'owner') throw forbidden(`only the owner of space "${space.name}" may delete it`);
    return page(reply, 200, spaceDeletePage({ csrf: session.csrf, space, counts: await options.memory.counts(callerOf(session), space.id) }));
  });

  scope.post<{ Params: { id: string }; Body: Form }>('/spaces/:id/delete', async (request, reply) => {
    const session = who(request);
    const space = await spaces.details(callerOf(session), pathSpaceId(request.params.id));
    try {
      await spaces.delete(callerOf(session), space.id, first(request.body, 'confirm') ?? '');
    } catch (error) {
      if (!isServiceError(error) || error.code !== 'INVALID_INPUT') throw error;
      const counts = await options.memory.counts(callerOf(session), space.id);
      return page(reply, 400, spaceDeletePage({ csrf: session.csrf, space, counts, error: `${capitalised(error.message)}. Nothing was deleted.` }));
    }
    return reply.redirect('/spaces?done=space-deleted', 303);
  });
}

/** A change the service refused for a reason the person can act on, and its status; undefined for a failure. */
function refusedStatus(error: unknown): number | undefined {
  if (!isServiceError(error)) return undefined;
  switch (error.code) {
    case 'INVALID_INPUT':
      return 400;
    case 'NOT_FOUND':
      return 404;
    case 'FORBIDDEN':
      return 403;
    default:
      return undefined;
  }
}

const capitalised = (text: string): string => text.replace(/^\w/, (letter) => letter.toUpperCase());

/** An import that stopped: on a limit or a header it cannot read (400), the quota (403), or a failure (503). */
function importStatus(stoppedBy: string | undefined): number {
  if (stoppedBy === undefined) return 200;
  if (stoppedBy === 'INVALID_INPUT') return 400;
  return stoppedBy === 'QUOTA_EXCEEDED' ? 403 : 503;
}

/** Sends a screen; a signed-in one says who is signed in (so a session swapped in by another page shows). */
function page(reply: FastifyReply, status: number, body: string): FastifyReply {
  const identity = reply.request.webIdentity;
  return reply.code(status).type('text/html; charset=utf-8').send(identity === undefined ? body : withIdentity(body, identity));
}

const CSRF_REFUSED = 'The form was not sent from this page (its security token is missing or wrong). Reload the page and try again.';

/**
 * Why a state-changing request is refused before its handler runs, whatever its route: every form of the page is
 * url-encoded and carries the session's token, so any other type, or a missing or wrong token, has no effect.
 * A route that takes a file (webFileUpload) takes only multipart, and checks the token before reading the file.
 */
function formRefusal(request: FastifyRequest, session: Session, sessions: WebSessions): { status: number; message: string } | undefined {
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const expected = request.routeOptions.config.webFileUpload === true ? 'multipart/form-data' : 'application/x-www-form-urlencoded';
  if (type !== expected) return { status: 415, message: `This form must be sent from this page (as ${expected}); nothing was done. Reload the page and try again.` };
  if (expected === 'multipart/form-data') return undefined;
  return sessions.csrfValid(session, first((request.body ?? {}) as Form, 'csrf')) ? undefined : { status: 403, message: CSRF_REFUSED };
}

function first(body: Form | undefined, name: string): string | undefined {
  const value = body?.[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Printable ASCII but the space and the backslash (a browser reads `\` as `/`), starting with one `/`. */
const LOCAL_PATH = /^\/(?!\/)[\x21-\x5b\x5d-\x7e]*$/;
const NEXT_MAX_CHARS = 2000;

/**
 * A path of ours to return to, or `/`: printable ASCII starting with a single `/` (no control character, space or
 * backslash: browsers drop tabs and newlines, so `/\t/evil` would be `//evil`), and a path part without `//`,
 * `\` or a control character once percent-decoded either. Anything else (absolute URLs, `//evil`, `/\evil`,
 * non-ASCII, over 2,000 characters) gives `/`.
 */
function localPath(value: string | undefined): string {
  if (value === undefined || value.length > NEXT_MAX_CHARS || !LOCAL_PATH.test(value)) return '/';
  const path = value.split(/[?#]/, 1)[0]!;
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return '/';
  }
  if (path.includes('//') || decoded.includes('//') || decoded.includes('\\') || [...decoded].some((char) => char < ' ' || char === '\x7f')) return '/';
  return path.startsWith('/auth/') ? '/' : value;
}

/** A memory id from the path; anything else is "not found", like an id of another person. */
function pathId(value: string): number {
  const id = /^[1-9]\d{0,15}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(id)) throw Object.assign(new Error('not found'), { statusCode: 404 });
  return id;
}

function storedForm(memory: Memory) {
  return { text: memory.text, tags: memory.tags.join(', '), importance: String(memory.importance), reason: '' };
}

const isRefusal = (error: unknown): error is ServiceError =>
  isServiceError(error) && (error.code === 'INVALID_INPUT' || error.code === 'SECRET_REJECTED' || error.code === 'QUOTA_EXCEEDED');

/** The service's message, with the field named as the form labels it. */
function fieldMessage(error: ServiceError, labels: Record<string, string>): string {
  if (error.field === undefined) return error.message;
  const field = labels[error.field] ?? error.field.replace(/^\w/, (letter) => letter.toUpperCase());
  return `${field} ${error.message}`;
}

function readPending(value: string | undefined): PendingSignIn | undefined {
  if (value === undefined) return undefined;
  const parsed = z
    .strictObject({ state: z.string().min(1).max(200), codeVerifier: z.string().min(43).max(128), next: z.string().max(NEXT_MAX_CHARS) })
    .safeParse((() => {
      try {
        return JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
      } catch {
        return undefined;
      }
    })());
  return parsed.success ? { ...parsed.data, next: localPath(parsed.data.next) } : undefined;
}

function welcomeNotice(url: string): string | undefined {
  const query = new URLSearchParams(url.split('?')[1] ?? '');
  if (query.has('deleted')) return 'All your data was deleted, and you were signed out.';
  if (query.has('signed-out')) return 'You are signed out.';
  return undefined;
}

/** The notice after an action: from a fixed set, so a link cannot make the page say anything else. */
function doneNotice(done: string | undefined, id: string | undefined): string | undefined {
  const number = id !== undefined && /^\d{1,16}$/.test(id) ? id : '';
  switch (done) {
    case 'forgotten':
      return `Memory ${number} was forgotten: it will not be recalled again. Its old text is under “Corrected & forgotten”.`;
    case 'confirmed':
      return 'Marked as still true.';
    case 'corrected':
      return `Saved. This is the corrected memory; memory ${number} is kept under “Corrected & forgotten”.`;
    case 'erased':
      return `The record of memory ${number} was erased.`;
    case 'separated':
      return `That text is now memory ${number}, a memory of its own.`;
    case 'erased-all':
      return `${number} records were erased.`;
    case 'space-made':
      return 'The space was made. Share it below.';
    case 'renamed':
      return 'The space was renamed.';
    case 'shared':
      return 'Shared.';
    case 'role-changed':
      return 'The role was changed.';
    case 'removed':
      return 'The member was removed: they no longer see this space.';
    case 'handed-on':
      return 'The space was handed on; you are a writer in it now.';
    case 'group':
      return 'The group was saved.';
    case 'left':
      return 'You left the space.';
    case 'space-deleted':
      return 'The space was deleted, with everything in it.';
    default:
      return undefined;
  }
}

/** Failures as pages: refused input 400, not found 404, an unavailable database or model 503, a bug 500. */
function renderError(error: FastifyError | ServiceError | SignInError, request: FastifyRequest, reply: FastifyReply, logger: Logger): FastifyReply {
  const csrf = request.webSession?.csrf;
  const home = { href: '/', label: 'Your memories' };
  if (error instanceof SignInError) {
    logger.warn({ reqId: request.id, err: { message: error.message, cause: (error.cause as Error | undefined)?.message } }, 'web sign-in failed');
    return page(reply, error.status, messagePage('Sign-in failed', `Sign-in failed: ${error.description}.`, { href: '/auth/sign-in', label: 'Try again' }));
  }
  if (isServiceError(error)) {
    switch (error.code) {
      case 'NOT_FOUND':
        return page(reply, 404, messagePage('Not found', `Not found: ${error.message}.`, home, csrf));
      case 'INVALID_INPUT':
      case 'SECRET_REJECTED':
        return page(reply, 400, messagePage('Not done', error.message, home, csrf));
      case 'QUOTA_EXCEEDED':
        return page(reply, 403, messagePage('Not done', error.message, home, csrf));
      case 'FORBIDDEN':
        return page(reply, 403, messagePage('Not allowed', `Not done: ${error.message}. Nothing was changed.`, home, csrf));
      default:
        return page(reply, 503, messagePage('Not available', `This could not be done now: ${error.message}. Try again in a moment.`, home, csrf));
    }
  }
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  if (status === 404) return page(reply, 404, messagePage('Not found', 'There is no such page here.', home, csrf));
  if (status === 429) return page(reply, 429, messagePage('Too many requests', `${error.message}.`, home, csrf));
  if (status < 500) return page(reply, status, messagePage('Not done', 'The request could not be read.', home, csrf));
  logger.error({ reqId: request.id, err: { type: error.name, stack: error.stack?.split('\n').slice(1, 6).join('\n') } }, 'web page error');
  return page(reply, 500, messagePage('Something went wrong', 'This could not be done, because of an error of ours. It is logged; try again later.', home, csrf));
}
