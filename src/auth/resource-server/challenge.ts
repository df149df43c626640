/** The RFC 9728 metadata URL a client re-fetches to rediscover the authorization server. */
export function resourceMetadataUrl(baseUrl: string): string {
  return `${baseUrl}/.well-known/oauth-protected-resource/mcp`;
}

export interface ChallengeOptions {
  readonly resourceMetadata: string;
  readonly error?: 'invalid_token' | 'insufficient_scope' | 'invalid_request';
  readonly description?: string;
  readonly scope?: string;
}

/** `WWW-Authenticate: Bearer ...` (RFC 6750 §3, RFC 9728 §5.1). */
export function bearerChallenge(options: ChallengeOptions): string {
  const params: string[] = [];
  if (options.error !== undefined) params.push(`error="${options.error}"`);
  if (options.description !== undefined) params.push(`error_description="${quote(options.description)}"`);
  if (options.scope !== undefined) params.push(`scope="${quote(options.scope)}"`);
  params.push(`resource_metadata="${quote(options.resourceMetadata)}"`);
  return `Bearer ${params.join(', ')}`;
}

// RFC 6750 restricts error_description to printable ASCII without '"' and '\'.
function quote(value: string): string {
  return value.replace(/[^\x20-\x7e]|["\\]/g, "'");
}
