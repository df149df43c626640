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
