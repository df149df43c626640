import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';
import { allowInsecureRequests, discovery, type ServerMetadata } from 'openid-client';
import { createJwtVerifier, TokenError, type TokenVerifier } from './token-verifier.js';

/**
 * Verifies access tokens of another authorization server (Keycloak, Auth0, Entra ID, Okta, ...): its metadata
 * is discovered with openid-client (RFC 8414 first, then OpenID discovery), its keys fetched from its JWKS by
 * jose, which refetches on an unknown `kid` (key rotation) at most once per cooldown.
 */
export interface ExternalVerifierOptions {
  readonly issuer: string;
  readonly audience: string;
  readonly subjectClaim: string;
  readonly membershipClaim?: string | undefined;
  /** Least time between two JWKS fetches caused by unknown key ids. Default 30 s. */
  readonly jwksCooldownSeconds?: number;
  /** Keys older than this are refetched on next use. Default 10 min. */
  readonly jwksMaxAgeSeconds?: number;
  /** After a failed discovery, requests fail fast for this long before it is tried again. Default 5 s. */
  readonly discoveryRetrySeconds?: number;
  readonly timeoutSeconds?: number;
}

export interface ExternalVerifier extends TokenVerifier {
  /** Discovers the server now; resolves to its metadata or rejects with the reason. */
  discover(): Promise<ServerMetadata>;
}

/** Asymmetric algorithms only: never `none`, never a shared secret. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

export function createExternalVerifier(options: ExternalVerifierOptions): ExternalVerifier {
  const timeoutSeconds = options.timeoutSeconds ?? 10;
  const retryMs = (options.discoveryRetrySeconds ?? 5) * 1000;
  let discovered: Promise<{ metadata: ServerMetadata; getKey: JWTVerifyGetKey }> | undefined;
  let failedAt = 0;

  const discoverOnce = async () => {
    const metadata = await discoverMetadata(options.issuer, timeoutSeconds);
    if (typeof metadata.jwks_uri !== 'string') throw new Error(`${options.issuer} publishes no jwks_uri`);
    const getKey = createRemoteJWKSet(new URL(metadata.jwks_uri), {
      cooldownDuration: (options.jwksCooldownSeconds ?? 30) * 1000,
      cacheMaxAge: (options.jwksMaxAgeSeconds ?? 600) * 1000,
      timeoutDuration: timeoutSeconds * 1000,
    });
    return { metadata, getKey };
  };

  const ensure = () => {
    if (discovered === undefined) {
      if (Date.now() - failedAt < retryMs) {
        return Promise.reject(new TokenError(`authorization server ${options.issuer} is unreachable; try again shortly`));
      }
      discovered = discoverOnce().catch((error: unknown) => {
        discovered = undefined;
        failedAt = Date.now();
        throw error;
      });
    }
    return discovered;
  };

  const verifier = createJwtVerifier({
    issuer: options.issuer,
    audience: options.audience,
    subjectClaim: options.subjectClaim,
    membershipClaim: options.membershipClaim,
    algorithms: ALGORITHMS,
    // Keycloak, Auth0 and Entra ID issue plain `typ: JWT` access tokens.
    requireAccessTokenType: false,
    getKey: async (header, token) => {
      let getKey: JWTVerifyGetKey;
      try {
        ({ getKey } = await ensure());
      } catch (error) {
        if (error instanceof TokenError) throw error;
        throw new TokenError(`authorization server metadata could not be fetched from ${options.issuer}`);
      }
      return getKey(header, token);
    },
  });

  return {
    verify: (token) => verifier.verify(token),
    discover: async () => (await ensure()).metadata,
  };
}

/** RFC 8414 (`/.well-known/oauth-authorization-server`), then OpenID Connect discovery. */
async function discoverMetadata(issuer: string, timeoutSeconds: number): Promise<ServerMetadata> {
  const server = new URL(issuer);
  const execute = server.protocol === 'http:' ? [allowInsecureRequests] : [];
  let firstError: unknown;
  for (const algorithm of ['oauth2', 'oidc'] as const) {
    try {
      // openid-client wants a client id; a resource server has none, and this one is never sent anywhere.
      const configuration = await discovery(server, 'memory-service-resource-server', undefined, undefined, {
        algorithm,
        execute,
        timeout: timeoutSeconds,
      });
      return configuration.serverMetadata();
    } catch (error) {
      firstError ??= error;
    }
  }
  throw firstError;
}
