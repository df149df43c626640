export const SCOPES = ['memory:read', 'memory:write'] as const;
export type Scope = (typeof SCOPES)[number];
export const DEFAULT_SCOPE = SCOPES.join(' ');

export function parseScopes(value: unknown): string[] {
  if (typeof value === 'string') return value.split(' ').filter((scope) => scope !== '');
  if (Array.isArray(value)) return value.filter((scope): scope is string => typeof scope === 'string');
  return [];
}
