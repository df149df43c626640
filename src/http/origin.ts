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

/** Says whether a request's Host header names this server; `localPort` is the port it arrived on. */
export type HostCheck = (host: string | undefined, localPort: number | undefined) => boolean;

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

export function isLoopbackAddress(address: string): boolean {
  return address === 'localhost' || address === '::1' || /^127\.\d+\.\d+\.\d+$/.test(address);
}

/**
 * DNS-rebinding protection for a server listening on a loopback address: a page on evil.example whose
 * name resolves to 127.0.0.1 reaches us with `Host: evil.example`. Only BaseUrl's host name (with
 * BaseUrl's port or none), or a loopback name with the port the request arrived on, is accepted.
 * Undefined (no check) for other listen addresses, where a reverse proxy or the network decides which
 * names reach the service.
 *
 * BaseUrl's name is accepted without its port because nginx's `$host`, which most proxy configurations
 * pass as Host, drops it; a rebinding page cannot present our name, so the port adds no protection.
 */
export function loopbackHostCheck(baseUrl: string, listenHost: string): HostCheck | undefined {
  if (!isLoopbackAddress(listenHost)) return undefined;
  const base = new URL(baseUrl);
  const publicHosts = [base.host.toLowerCase(), base.hostname.toLowerCase()];
  // Exact Host values accepted per listening port, so a request costs one set lookup.
  const accepted = new Map<number | undefined, ReadonlySet<string>>();
  const acceptedOn = (port: number | undefined): ReadonlySet<string> => {
    let hosts = accepted.get(port);
    if (hosts === undefined) {
      hosts = new Set([...publicHosts, ...[...LOOPBACK_NAMES].flatMap((name) => (port === 80 ? [name, `${name}:80`] : [`${name}:${port}`]))]);
      accepted.set(port, hosts);
    }
    return hosts;
  };
  return (host, localPort) => host !== undefined && acceptedOn(localPort).has(host.toLowerCase());
}
