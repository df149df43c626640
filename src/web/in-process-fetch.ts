import type { FastifyInstance } from 'fastify';
import type { CustomFetch } from 'openid-client';

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * A fetch that answers requests to this service in-process (`inject`), for the page's sign-in with the built-in
 * authorization server: BaseUrl may be a public name this process cannot reach from inside (a reverse proxy,
 * a container), and the server it would reach is this one anyway.
 */
export function inProcessFetch(app: FastifyInstance): CustomFetch {
  return async (url, options) => {
    const target = new URL(url);
    const body = options.body;
    const response = await app.inject({
      method: options.method as 'GET' | 'POST',
      url: `${target.pathname}${target.search}`,
      headers: { ...options.headers, host: target.host },
      ...(body === undefined || body === null ? {} : { payload: typeof body === 'string' ? body : body instanceof URLSearchParams ? body.toString() : Buffer.from(body as ArrayBuffer) }),
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      for (const item of Array.isArray(value) ? value : [value]) if (item !== undefined) headers.append(name, String(item));
    }
    return new Response(NULL_BODY_STATUSES.has(response.statusCode) ? null : response.rawPayload, { status: response.statusCode, headers });
  };
}
