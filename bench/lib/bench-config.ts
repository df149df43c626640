import { issueAccessToken } from '../../src/auth/authorization-server/access-token.js';
import { DEFAULT_SCOPE } from '../../src/auth/scopes.js';
import type { StateFile } from '../../src/auth/authorization-server/state-file.js';
import { loadConfig, type Config } from '../../src/config/load-config.js';

/** A benchmark server's settings: loopback, no rate limit, silent, data in `dataDir`; `env` overrides. */
export function benchConfig(dataDir: string, env: Record<string, string> = {}): Config {
  return loadConfig({
    cwd: dataDir,
    env: {
      HOME: dataDir,
      MEMORY_SERVICE_PORT: '0',
      MEMORY_SERVICE_BASE_URL: 'http://127.0.0.1:8799',
      MEMORY_SERVICE_DATA_DIR: dataDir,
      MEMORY_SERVICE_RATE_LIMIT_PER_MINUTE: '0',
      MEMORY_SERVICE_LOG_LEVEL: 'silent',
      ...env,
    },
  });
}

/** An access token for `subject`, as `memory-service token issue` would sign it. */
export function benchToken(stateFile: StateFile, config: Config, subject: string, ttlSeconds = 3600): Promise<string> {
  return issueAccessToken(stateFile, {
    issuer: config.oauth.authorizationServer!,
    audience: config.oauth.audience,
    subject,
    scope: DEFAULT_SCOPE,
    ttlSeconds,
  });
}
