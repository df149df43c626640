import type { JsonRpcRequest } from './jsonrpc.js';

/**
 * The protocol revisions this server speaks, side by side on one endpoint. 2026-07-28 is stateless: every
 * request carries its version and the client's capabilities in `params._meta`, and there is no handshake.
 * The 2025 revisions start with `initialize`, which negotiates one of them.
 */
export const MODERN_PROTOCOL_VERSIONS = ['2026-07-28'] as const;
export const LEGACY_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [...MODERN_PROTOCOL_VERSIONS, ...LEGACY_PROTOCOL_VERSIONS];

/** The reserved `_meta` keys of the per-request envelope (2026-07-28). */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const;

/**
 * Which revision a request is served under. `modern`: the per-request revision; `claimedVersion` is the
 * version its `_meta` names (undefined when the envelope lacks it, which the dispatcher refuses).
 */
export type Era = { readonly kind: 'legacy' } | { readonly kind: 'modern'; readonly claimedVersion: string | undefined };

export const LEGACY: Era = { kind: 'legacy' };

/**
 * A request is modern when its `_meta` names a protocol version, or when the transport declares a version
 * of 2026-07-28 or later (an HTTP request whose envelope is missing). Anything else is a 2025-era request,
 * served as before: legacy clients send no envelope, and the version header they send names the version
 * `initialize` negotiated.
 */
export function requestEra(request: JsonRpcRequest, transportVersion: string | undefined): Era {
  const meta = request.params._meta;
  const claimed = isRecord(meta) ? meta[META.protocolVersion] : undefined;
  if (claimed !== undefined) return { kind: 'modern', claimedVersion: typeof claimed === 'string' ? claimed : undefined };
  if (transportVersion !== undefined && isModernVersion(transportVersion)) return { kind: 'modern', claimedVersion: undefined };
  return LEGACY;
}

/** Revisions are dates; every one from 2026-07-28 on has the per-request envelope. */
function isModernVersion(version: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(version) && version >= MODERN_PROTOCOL_VERSIONS[0];
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
