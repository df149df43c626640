import type { IncomingHttpHeaders } from 'node:http';
import { JsonRpcError, RPC, type JsonRpcRequest } from '../mcp/jsonrpc.js';

/**
 * The request headers of MCP 2026-07-28 over Streamable HTTP: `MCP-Protocol-Version`, `Mcp-Method` and,
 * for the methods that name something, `Mcp-Name` mirror the body so that proxies and gateways can route
 * on them. A server that reads the body must refuse a request whose headers are missing or say something
 * else (HeaderMismatch, -32020), or a gateway and this server would act on different requests.
 */
export function headerMismatch(request: JsonRpcRequest, claimedVersion: string | undefined, headers: IncomingHttpHeaders): JsonRpcError | undefined {
  const version = single(headers['mcp-protocol-version']);
  if (version === undefined) return mismatch('the MCP-Protocol-Version header is required');
  // A missing _meta version is the envelope's fault, reported by the dispatcher as invalid params.
  if (claimedVersion !== undefined && version !== claimedVersion) {
    return mismatch(`MCP-Protocol-Version header value '${version}' does not match body value '${claimedVersion}'`);
  }
  const method = single(headers['mcp-method']);
  if (method === undefined) return mismatch('the Mcp-Method header is required');
  if (method !== request.method) return mismatch(`Mcp-Method header value '${method}' does not match body value '${request.method}'`);

  const source = NAME_SOURCE[request.method];
  const bodyName = source === undefined ? undefined : request.params[source];
  const rawName = single(headers['mcp-name']);
  if (rawName === undefined) {
    return typeof bodyName === 'string' ? mismatch(`the Mcp-Name header is required for ${request.method}`) : undefined;
  }
  const name = decodeHeaderValue(rawName);
  if (name === undefined) return mismatch('the Mcp-Name header holds characters a header value may not carry, or a malformed =?base64?…?= value');
  if (name !== bodyName) {
    return mismatch(`Mcp-Name header value '${rawName}' does not match body value ${typeof bodyName === 'string' ? `'${bodyName}'` : '(none)'}`);
  }
  return undefined;
}

/** Which body field `Mcp-Name` mirrors, per method. */
const NAME_SOURCE: Readonly<Record<string, string>> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

const mismatch = (why: string) => new JsonRpcError(RPC.headerMismatch, `Header mismatch: ${why}`);

/** Node joins repeated headers with ", "; an array (set-cookie only) never applies here. */
export function single(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

const PLAIN_VALUE = /^[\x20-\x7e\t]*$/;
const BASE64_SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A header value as the revision encodes it: plain visible ASCII, or `=?base64?…?=` around the UTF-8 of a
 * value that is not (non-ASCII, control characters, surrounding spaces). Undefined when it is neither.
 */
function decodeHeaderValue(value: string): string | undefined {
  if (!PLAIN_VALUE.test(value)) return undefined;
  const encoded = BASE64_SENTINEL.exec(value);
  if (encoded === null) return value.startsWith('=?base64?') ? undefined : value;
  const bytes = Buffer.from(encoded[1]!, 'base64');
  // Buffer.from skips what is not base64; a value that does not survive the round trip was not base64.
  const unpadded = (text: string) => text.replace(/=+$/, '');
  if (unpadded(bytes.toString('base64')) !== unpadded(encoded[1]!)) return undefined;
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}
