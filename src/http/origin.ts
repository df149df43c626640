/**
 * DNS-rebinding and cross-site protection: browsers always send Origin, hosted clients and SDKs send none.
 * A present Origin must be the service's own or explicitly allowed.
 */
export function originAllowed(origin: string | undefined, allowed: ReadonlySet<string>): boolean {
  if (origin === undefined) return true;
  return allowed.has('*') || allowed.has(origin.replace(/\/+$/, '').toLowerCase());
}

export function allowedOriginSet(baseUrl: string, configured: readonly string[]): ReadonlySet<string> {
  return new Set([new URL(baseUrl).origin, ...configured].map((origin) => origin.replace(/\/+$/, '').toLowerCase()));
}
