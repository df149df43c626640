import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type JWK } from 'oidc-provider';

/**
 * A second, real authorization server on its own loopback port (oidc-provider, as Keycloak or Auth0 would
 * be): client-credentials tokens as RFC 9068 JWTs for whatever resource is asked, signed with ES384 keys
 * that `rotate()` replaces without changing the address.
 */
export interface ExternalIssuer {
  readonly issuer: string;
  /** GET /jwks requests served so far. */
  readonly jwksFetches: number;
  /** A client-credentials token; `client` names which of the issuer's two robots asks (their `sub`). */
  token(options?: { resource?: string; scope?: string; client?: RobotName }): Promise<string>;
  /** The `groups` claim of the tokens of client `client` (a robot, or the page's web client) from now on (none: no claim), as a directory's group change. */
  setGroups(client: string, groups: readonly string[] | undefined): void;
  /** A new signing key becomes current; the old one stays published for tokens already out. */
  rotate(): void;
  close(): Promise<void>;
}

export type RobotName = 'robot' | 'helper';
const ROBOTS: Readonly<Record<RobotName, { client_id: string; client_secret: string }>> = {
  robot: { client_id: 'robot', client_secret: 'robot-secret-robot-secret-robot-secret' },
  helper: { client_id: 'helper', client_secret: 'helper-secret-helper-secret-helper-secret' },
};

/**
 * A confidential client for a person's browser sign-in (authorization code + PKCE), as an operator registers
 * one for the web page. With it, the server also shows oidc-provider's development login and consent pages
 * (any login name is accepted and becomes the `sub`), as a real identity provider's pages would.
 */
export interface ExternalWebClient {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly redirectUri: string;
}

export async function startExternalIssuer(options: { defaultResource: string; webClient?: ExternalWebClient }): Promise<ExternalIssuer> {
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  let jwksFetches = 0;
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/jwks') === true) jwksFetches += 1;
    handler!(req, res);
  });
  // Idle connections are left for the client to close: a server closing one after 5 s races a client reusing it
  // (ECONNRESET on a busy machine). close() below ends them all.
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const keys: JWK[] = [];
  const groups = new Map<string, readonly string[]>();
  const web = options.webClient;
  const rotate = () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    keys.unshift({ ...(privateKey.export({ format: 'jwk' }) as JWK), kid: randomUUID(), alg: 'ES384', use: 'sig' });
    const provider = new Provider(issuer, {
      jwks: { keys: [...keys] },
      clients: [
        ...Object.values(ROBOTS).map((robot) => ({
          ...robot,
          grant_types: ['client_credentials'],
          redirect_uris: [],
          response_types: [],
          id_token_signed_response_alg: 'ES384' as const,
        })),
        ...(web === undefined
          ? []
          : [
              {
                client_id: web.clientId,
                client_secret: web.clientSecret,
                redirect_uris: [web.redirectUri],
                grant_types: ['authorization_code'],
                response_types: ['code' as const],
                token_endpoint_auth_method: 'client_secret_post' as const,
                id_token_signed_response_alg: 'ES384' as const,
              },
            ]),
      ],
      enabledJWA: { idTokenSigningAlgValues: ['ES384'] },
      scopes: ['memory:read', 'memory:write'],
      features: {
        clientCredentials: { enabled: true },
        devInteractions: { enabled: web !== undefined },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => options.defaultResource,
          getResourceServerInfo: (_ctx, resource) => ({
            scope: 'memory:read memory:write',
            audience: resource,
            accessTokenFormat: 'jwt',
            accessTokenTTL: 600,
            jwt: { sign: { alg: 'ES384' } },
          }),
        },
      },
      extraTokenClaims: (_ctx, token) => {
        const member = groups.get(String(token.clientId));
        return { email: 'robot@example.test', ...(member === undefined ? {} : { groups: [...member] }) };
      },
      ttl: { ClientCredentials: 600 },
    });
    handler = provider.callback();
  };
  rotate();

  return {
    issuer,
    get jwksFetches() {
      return jwksFetches;
    },
    setGroups(client, list) {
      if (list === undefined) groups.delete(client);
      else groups.set(client, list);
    },
    async token(request = {}) {
      const client = ROBOTS[request.client ?? 'robot'];
      const body = new URLSearchParams({ grant_type: 'client_credentials', scope: request.scope ?? 'memory:read memory:write' });
      if (request.resource !== undefined) body.set('resource', request.resource);
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
        },
        body,
      });
      const json = (await response.json()) as { access_token?: string };
      if (json.access_token === undefined) throw new Error(`external issuer refused: ${JSON.stringify(json)}`);
      return json.access_token;
    },
    rotate,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
