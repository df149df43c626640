export const SCOPES = ['memory:read', 'memory:write'] as const;
export type Scope = (typeof SCOPES)[number];
export const DEFAULT_SCOPE = SCOPES.join(' ');

/** The scope that limits a token to one space: `space:personal`, or the space's id (which begins with `space:`). */
export const SPACE_SCOPE_PREFIX = 'space:';
export const PERSONAL_SPACE_SCOPE = 'space:personal';

/** `space:personal`, or a shared space's id as migration 0020 allows it. */
const SPACE_SCOPE = /^space:(?:personal|[a-z0-9]{16,40})$/;

/** Whether `scope` limits a token to one space (see spaceLimitOf); a malformed `space:…` is no scope of ours. */
export function isSpaceScope(scope: string): boolean {
  return SPACE_SCOPE.test(scope);
}

/** The `space:` scopes among `scopes`, each once, in order. */
export function spaceScopesOf(scopes: Iterable<string>): string[] {
  return [...new Set([...scopes].filter(isSpaceScope))];
}

/**
 * The keys of the spaces a token's `space:` scopes limit it to (the personal space's key is the subject);
 * undefined when it has none, and may use every space its subject is a member of.
 */
export function spaceLimitOf(scopes: readonly string[], subject: string): readonly string[] | undefined {
  const named = scopes.filter((scope) => scope.startsWith(SPACE_SCOPE_PREFIX));
  if (named.length === 0) return undefined;
  return [...new Set(named.map((scope) => (scope === PERSONAL_SPACE_SCOPE ? subject : scope)))];
}

export function parseScopes(value: unknown): string[] {
  if (typeof value === 'string') return value.split(' ').filter((scope) => scope !== '');
  if (Array.isArray(value)) return value.filter((scope): scope is string => typeof scope === 'string');
  return [];
}
