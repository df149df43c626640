import type { FastifyInstance } from 'fastify';
import { SCOPES } from '../auth/scopes.js';

export interface WellKnownOptions {
  readonly resourceUrl: string;
  readonly authorizationServer: string | undefined;
}

/** RFC 9728 protected-resource metadata, at the path-suffixed and the bare location. */
export async function wellKnownRoutes(app: FastifyInstance, options: WellKnownOptions): Promise<void> {
  const document = {
    resource: options.resourceUrl,
    authorization_servers: options.authorizationServer === undefined ? [] : [options.authorizationServer],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'memory-service',
  };
  for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
    app.get(path, async (_request, reply) => reply.header('cache-control', 'public, max-age=300').send(document));
  }
}
