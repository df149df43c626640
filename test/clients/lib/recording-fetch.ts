/** One HTTP request a client sent: its JSON-RPC method (the HTTP method when it has no body) and MCP headers. */
export interface SentRequest {
  readonly method: string;
  readonly protocolVersion: string | null;
  readonly methodHeader: string | null;
}

/** A fetch for a client's transport that forwards every request and records it in `sent`. */
export function recordingFetch(sent: SentRequest[]): typeof fetch {
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as { method?: string }) : {};
    sent.push({ method: body.method ?? init?.method ?? 'GET', protocolVersion: headers.get('mcp-protocol-version'), methodHeader: headers.get('mcp-method') });
    return fetch(input, init);
  };
}
