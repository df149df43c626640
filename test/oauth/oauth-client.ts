import { createHash, randomBytes } from 'node:crypto';

/** A hand-driven OAuth client, for the protocol details and failures the SDK never shows. */
export interface TokenResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Record<string, unknown> & {
    access_token?: string;
    refresh_token?: string;
    error?: string;
    error_description?: string;
  };
}

export async function registerClient(
  baseUrl: string,
  metadata: Record<string, unknown>,
  headers: Record<string, string> = {},
  fetchFn: typeof fetch = fetch,
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> & { client_id?: string; error?: string } }> {
  const response = await fetchFn(`${baseUrl}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(metadata),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function authorizationUrl(baseUrl: string, params: Record<string, string | undefined>): URL {
  const url = new URL(`${baseUrl}/authorize`);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url;
}

/** An authorization code request with a fresh PKCE pair (S256): the URL to open, and the verifier the token request needs. */
export function codeRequest(baseUrl: string, params: Record<string, string | undefined>): { url: URL; verifier: string } {
  const { verifier, challenge } = pkce();
  return { url: authorizationUrl(baseUrl, { response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', ...params }), verifier };
}

export async function tokenRequest(baseUrl: string, params: Record<string, string | undefined>, headers: Record<string, string> = {}): Promise<TokenResponse> {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) body.set(name, value);
  const response = await fetch(`${baseUrl}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body,
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as TokenResponse['body'] };
}

/**
 * The user's part of an authorization request without a browser: follows the redirects keeping cookies, posts
 * the sign-in and consent forms as a browser would, and returns the URL the client's callback receives. For tests
 * that need many sign-ins quickly (the browser tests prove the pages themselves). `fetchFn` and `headers` choose
 * the route and the client address; `consent` adds fields to the consent form (the spaces chosen); `pages` collects
 * every page shown; `cookies` keeps the browser's cookies from one sign-in to the next.
 */
export async function signInWithForms(
  authorization: URL,
  credentials: { username: string; password: string },
  options: {
    fetchFn?: typeof fetch;
    headers?: Record<string, string>;
    decision?: 'allow' | 'deny';
    consent?: readonly (readonly [string, string])[];
    pages?: string[];
    cookies?: Map<string, string>;
  } = {},
): Promise<URL> {
  const fetchFn = options.fetchFn ?? fetch;
  const redirectUri = authorization.searchParams.get('redirect_uri')!;
  const cookies = options.cookies ?? new Map<string, string>();
  const send = async (url: string, init: RequestInit = {}) => {
    const response = await fetchFn(url, {
      ...init,
      redirect: 'manual',
      headers: { ...options.headers, ...(init.headers as Record<string, string>), cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return response;
  };
  const postForm = (action: string, base: string, fields: Record<string, string>, extra: readonly (readonly [string, string])[] = []) =>
    send(new URL(action, base).href, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams([...Object.entries(fields), ...extra.map(([name, value]): [string, string] => [name, value])]).toString(),
    });
  let url = authorization.href;
  for (let step = 0; step < 12; step++) {
    if (url.startsWith(redirectUri)) return new URL(url);
    const response = await send(url);
    if (response.status >= 300 && response.status < 400) {
      url = new URL(response.headers.get('location')!, url).href;
      continue;
    }
    const html = await response.text();
    options.pages?.push(html);
    if (response.status !== 200) throw new Error(`sign-in stopped at ${url}: HTTP ${response.status}: ${html.slice(0, 300)}`);
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
    if (action === undefined || csrf === undefined) throw new Error(`no form at ${url}: ${html.slice(0, 300)}`);
    const answer = action.endsWith('/login')
      ? await postForm(action, url, { csrf, username: credentials.username, password: credentials.password })
      : await postForm(action, url, { csrf, decision: options.decision ?? 'allow' }, options.consent);
    if (answer.status !== 303) throw new Error(`${action} answered HTTP ${answer.status}: ${(await answer.text()).slice(0, 300)}`);
    url = new URL(answer.headers.get('location')!, url).href;
  }
  throw new Error('sign-in did not reach the callback');
}
