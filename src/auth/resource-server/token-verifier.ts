import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { parseScopes, spaceLimitOf } from '../scopes.js';
import { subjectProblem } from '../subject.js';

/** Who is calling: the subject, and the spaces their memories are in that this token may use. */
export interface AuthInfo {
  readonly subject: string;
  readonly scopes: readonly string[];
  /**
   * The keys of the spaces the token is limited to (its `space:…` scopes, `space:personal` for the subject's own);
   * undefined: every space the subject is a member of.
   */
  readonly spaceLimit: readonly string[] | undefined;
  /** The values of the membership claim (OAuthMembershipClaim): groups that spaces may grant membership to. */
  readonly groups: readonly string[] | undefined;
  readonly clientId: string | undefined;
  readonly expiresAt: number | undefined;
}

/** A refused token. `description` names the failure and is safe to send back (never contains the token). */
export class TokenError extends Error {
  readonly description: string;

  constructor(description: string) {
    super(description);
    this.name = 'TokenError';
    this.description = description;
  }
}

export interface TokenVerifier {
  /** The verdict itself where it is already known (a cached token), so /mcp's hot path takes no promise turn. */
  verify(token: string): AuthInfo | Promise<AuthInfo>;
}

export interface JwtVerifierOptions {
  readonly issuer: string;
  readonly audience: string;
  readonly subjectClaim: string;
  /** The claim whose values (an array, or a space-separated string) name groups a space may be shared with. */
  readonly membershipClaim?: string | undefined;
  /** Resolves the verification key from the token header (local key set or remote JWKS). */
  readonly getKey: JWTVerifyGetKey;
  readonly algorithms: readonly string[];
  /** RFC 9068 `typ: at+jwt`; external servers often issue plain JWTs, so it is optional there. */
  readonly requireAccessTokenType: boolean;
  readonly clockToleranceSeconds?: number;
}

const ISSUER_ALIASES = (issuer: string): string[] => [issuer, issuer.endsWith('/') ? issuer.slice(0, -1) : `${issuer}/`];

export function createJwtVerifier(options: JwtVerifierOptions): TokenVerifier {
  const issuers = ISSUER_ALIASES(options.issuer);
  return {
    async verify(token) {
      let claims: JWTPayload;
      try {
        decodeProtectedHeader(token);
        claims = decodeJwt(token);
      } catch {
        throw new TokenError('malformed token: not a JWT access token');
      }
      // Checked before the signature so a token from another environment is reported as exactly that.
      if (typeof claims.iss !== 'string' || !issuers.includes(claims.iss)) {
        throw new TokenError(
          `issuer does not match: expected "${options.issuer}", got ${typeof claims.iss === 'string' ? `"${claims.iss}"` : 'none'}`,
        );
      }
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, options.getKey, {
          issuer: issuers,
          audience: options.audience,
          algorithms: [...options.algorithms],
          clockTolerance: options.clockToleranceSeconds ?? 10,
          requiredClaims: ['exp'],
          ...(options.requireAccessTokenType ? { typ: 'at+jwt' } : {}),
        }));
      } catch (error) {
        throw new TokenError(describeJoseError(error, options.audience));
      }
      const subject = payload[options.subjectClaim];
      if (typeof subject !== 'string' || subject === '') {
        throw new TokenError(`token has no "${options.subjectClaim}" claim naming the subject`);
      }
      const problem = subjectProblem(subject, options.subjectClaim);
      if (problem !== undefined) throw new TokenError(`subject not accepted: ${problem}`);
      const clientId = payload.client_id ?? payload.azp;
      const scopes = parseScopes(payload.scope ?? payload.scp);
      return {
        subject,
        scopes,
        spaceLimit: spaceLimitOf(scopes, subject),
        groups: options.membershipClaim === undefined ? undefined : groupsOf(payload[options.membershipClaim]),
        clientId: typeof clientId === 'string' ? clientId : undefined,
        expiresAt: payload.exp,
      };
    },
  };
}

/** At most this many groups are taken from a token: row-level security reads them in every statement. */
const MAX_GROUPS = 100;

function groupsOf(claim: unknown): readonly string[] | undefined {
  const values = parseScopes(claim).filter((group) => group.length <= 200);
  return values.length === 0 ? undefined : values.slice(0, MAX_GROUPS);
}

function describeJoseError(error: unknown, audience: string): string {
  // A key resolver's own refusal (e.g. an unreachable external authorization server) names itself.
  if (error instanceof TokenError) return error.description;
  if (error instanceof errors.JWTExpired) return 'token expired';
  if (error instanceof errors.JWKSNoMatchingKey) return 'unknown signing key';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'bad signature';
  if (error instanceof errors.JWKSTimeout) return 'signing keys could not be fetched in time';
  if (error instanceof errors.JOSEAlgNotAllowed) return 'signing algorithm not allowed';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return `audience does not match: expected "${audience}"`;
    if (error.claim === 'typ') return 'not an access token (typ must be at+jwt)';
    if (error.claim === 'nbf') return 'token not yet valid';
    if (error.claim === 'iat') return 'token issued in the future';
    return `invalid "${error.claim}" claim`;
  }
  if (error instanceof errors.JWTInvalid || error instanceof errors.JWSInvalid) return 'malformed token';
  return 'token could not be verified';
}
