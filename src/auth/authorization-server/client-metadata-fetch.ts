import { lookup as systemLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, fetch as undiciFetch } from 'undici';

/**
 * Fetches Client ID Metadata Documents (CIMD) for oidc-provider, which calls it with a client_id that is an https
 * URL. The URL comes from whoever opens /authorize, so the fetch is the server-side request forgery surface:
 * https only (oidc-provider checks that), every address the name resolves to must be public unless the operator
 * named the host (OAuthClientMetadataAllowedHosts), no redirects, a size and a time limit. Failures are
 * remembered for a while, so a bad URL cannot make the server fetch it on every request.
 */

export type LookupFunction = (
  hostname: string,
  options: LookupOneOptions | LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

export interface ClientMetadataFetchOptions {
  /** Host names fetched even when they resolve to private, loopback or link-local addresses. */
  readonly allowedHosts: readonly string[];
  /** The network edge, for tests: a CA to trust and a resolver (default: the system's). */
  readonly connect?: { readonly ca?: string; readonly lookup?: LookupFunction } | undefined;
  readonly maxBytes?: number;
  readonly timeoutMs?: number;
  /** How long a failure is remembered (answered again without fetching). */
  readonly failureTtlMs?: number;
}

export const CLIENT_METADATA_MAX_BYTES = 5 * 1024;
/** oidc-provider gives every outgoing request 2.5 s (a user is waiting); this is the same limit. */
const TIMEOUT_MS = 2_500;
const FAILURE_TTL_MS = 60_000;
/** Failures remembered at most; the oldest are forgotten first. */
const MAX_FAILURES = 1_000;

/**
 * IPv4-compatible IPv6 (::a.b.c.d, deprecated by RFC 4291): ipaddr.js calls it unicast, yet it carries an IPv4
 * address (::127.0.0.1 is loopback to some stacks).
 */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96') as [ipaddr.IPv6, number];

/**
 * Whether a metadata document may be fetched from this address: only addresses ipaddr.js classifies as plain
 * unicast. Everything else is refused: private, loopback, link-local, CGNAT, reserved, benchmarking, multicast,
 * and every form that carries or translates to an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo), whatever
 * address it carries.
 */
export function isPublicAddress(address: string): boolean {
  // Node's parser first: strict dotted quads and IPv6 only (ipaddr.js also reads "127.1" and hex forms).
  if (isIP(address) === 0) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.range() !== 'unicast') return false;
  return !(parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).match(IPV4_COMPATIBLE));
}

export class ClientMetadataFetchError extends Error {}

/** A client_id that names its metadata document (oidc-provider checks the rest of the URL's shape). */
export function isUrlClientId(clientId: unknown): clientId is string {
  return typeof clientId === 'string' && clientId.startsWith('https://');
}

/** oidc-provider's `fetch` configuration: resolves to the document's response, or rejects saying why not. */
export function clientMetadataFetch(options: ClientMetadataFetchOptions): typeof fetch {
  const allowed = new Set(options.allowedHosts.map((host) => host.toLowerCase().replace(/^\[|\]$/g, '')));
  const maxBytes = options.maxBytes ?? CLIENT_METADATA_MAX_BYTES;
  const timeoutMs = options.timeoutMs ?? TIMEOUT_MS;
  const failureTtlMs = options.failureTtlMs ?? FAILURE_TTL_MS;
  const failures = new Map<string, { readonly message: string; readonly until: number }>();
  const baseLookup = options.connect?.lookup ?? (systemLookup as LookupFunction);

  /** Resolves every address of a name and refuses the connection when any of them is not public. */
  const checkedLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    baseLookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error !== null) return callback(error, []);
      const list = addresses as LookupAddress[];
      const refused = allowed.has(hostname.toLowerCase()) ? undefined : list.find((entry) => !isPublicAddress(entry.address));
      if (refused !== undefined || list.length === 0) return callback(notPublic(hostname), []);
      if ((lookupOptions as LookupAllOptions).all === true) return callback(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
  const agent = new Agent({
    connect: { lookup: checkedLookup as never, ...(options.connect?.ca === undefined ? {} : { ca: options.connect.ca }) },
    // A document is one small response: no connection is kept for the next one.
    pipelining: 0,
  });

  const fetchDocument = async (url: string, init: RequestInit | undefined): Promise<Response> => {
    const parsed = new URL(url);
    if (parsed.protocol !== 'https:') throw new ClientMetadataFetchError('the client metadata document must be served over https');
    const host = parsed.hostname.replace(/^\[|\]$/g, '');
    // A literal address is never looked up: it is checked here instead.
    if (isIP(host) !== 0 && !isPublicAddress(host) && !allowed.has(host)) throw notPublic(host);
    const given = init?.signal;
    const signal = given === undefined || given === null ? AbortSignal.timeout(timeoutMs) : AbortSignal.any([given, AbortSignal.timeout(timeoutMs)]);
    let response;
    try {
      response = await undiciFetch(url, { method: 'GET', headers: { accept: 'application/json' }, redirect: 'manual', signal, dispatcher: agent });
    } catch (error) {
      throw describeNetworkError(error, timeoutMs);
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new ClientMetadataFetchError(`the client metadata document answered HTTP ${response.status}${response.status >= 300 && response.status < 400 ? ' (redirects are not followed)' : ''}`);
    }
    const body = await readBounded(response, maxBytes, timeoutMs);
    let document: unknown;
    try {
      document = JSON.parse(body.toString('utf8'));
    } catch {
      throw new ClientMetadataFetchError('the client metadata document is not JSON');
    }
    if (typeof document !== 'object' || document === null || Array.isArray(document)) {
      throw new ClientMetadataFetchError('the client metadata document is not a JSON object');
    }
    if ((document as { client_id?: unknown }).client_id !== url) {
      throw new ClientMetadataFetchError("the client metadata document's client_id is not the URL it was fetched from");
    }
    const headers = new Headers();
    for (const name of ['cache-control', 'expires', 'content-type']) {
      const value = response.headers.get(name);
      if (value !== null) headers.set(name, value);
    }
    return new Response(new Uint8Array(body), { status: 200, headers });
  };

  return async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const failed = failures.get(url);
    if (failed !== undefined && failed.until > Date.now()) throw new ClientMetadataFetchError(failed.message);
    failures.delete(url);
    try {
      return await fetchDocument(url, init);
    } catch (error) {
      const message = error instanceof ClientMetadataFetchError ? error.message : 'the client metadata document could not be fetched';
      if (failures.size >= MAX_FAILURES) failures.delete(failures.keys().next().value!);
      failures.set(url, { message, until: Date.now() + failureTtlMs });
      throw new ClientMetadataFetchError(message, { cause: error });
    }
  };
}

function notPublic(host: string): ClientMetadataFetchError {
  return new ClientMetadataFetchError(
    `the client metadata document's host ${host} is not a public address (an operator can allow it with OAuthClientMetadataAllowedHosts)`,
  );
}

function describeNetworkError(error: unknown, timeoutMs: number): ClientMetadataFetchError {
  if (error instanceof ClientMetadataFetchError) return error;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof ClientMetadataFetchError) return cause;
  const name = (error as { name?: string }).name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new ClientMetadataFetchError(`the client metadata document did not arrive within ${timeoutMs / 1000} s`);
  }
  return new ClientMetadataFetchError('the client metadata document could not be fetched', { cause: error });
}

/** The body, refusing more than `maxBytes` whatever Content-Length says. */
async function readBounded(response: Awaited<ReturnType<typeof undiciFetch>>, maxBytes: number, timeoutMs: number): Promise<Buffer> {
  const tooLarge = () => new ClientMetadataFetchError(`the client metadata document is larger than ${maxBytes} bytes`);
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let received = 0;
  try {
    for await (const chunk of response.body ?? []) {
      received += chunk.length;
      // Leaving the loop cancels the stream.
      if (received > maxBytes) throw tooLarge();
      chunks.push(Buffer.from(chunk));
    }
  } catch (error) {
    throw describeNetworkError(error, timeoutMs);
  }
  return Buffer.concat(chunks);
}
