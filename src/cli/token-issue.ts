import { issueAccessToken } from '../auth/authorization-server/access-token.js';
import { DEFAULT_SCOPE, isSpaceScope, PERSONAL_SPACE_SCOPE, SCOPES } from '../auth/scopes.js';
import { StateFile } from '../auth/authorization-server/state-file.js';
import type { Config } from '../config/load-config.js';
import { isServiceError } from '../errors.js';
import { openStorage } from '../open-storage.js';
import { PERSONAL_SPACE_ID, resolveSpaces } from '../spaces/spaces.js';
import { subjectOption, UsageError, type CommandIO, type SubjectOptions } from './command.js';

const DEFAULT_TTL = '30d';

/** Prints a signed access token and nothing else, for backends that put a token in a header. */
export async function tokenIssueCommand(
  config: Config,
  options: SubjectOptions & { scope: string | undefined; ttl: string | undefined; space?: readonly string[] | undefined },
  io: CommandIO,
): Promise<number> {
  // The verifier would refuse a token for a bad subject anyway: say so now rather than print one that never works.
  const subject = subjectOption(options, 'token issue', config);
  if (!config.oauth.builtIn) {
    throw new UsageError(
      'token issue: only the built-in authorization server issues tokens (OAuthAuthorizationServer must equal BaseUrl); ' +
        'get tokens from your authorization server instead',
    );
  }
  const scope = (options.scope ?? DEFAULT_SCOPE).split(/[\s,]+/).filter((item) => item !== '');
  const unknown = scope.filter((item) => !(SCOPES as readonly string[]).includes(item));
  if (unknown.length > 0 || scope.length === 0) {
    throw new UsageError(`token issue: --scope must name ${SCOPES.join(' and/or ')} (got ${JSON.stringify(options.scope)})`);
  }
  const ttlSeconds = parseDuration(options.ttl ?? DEFAULT_TTL);
  const spaces = await spaceScopes(config, subject, options.space ?? []);
  const token = await issueAccessToken(new StateFile(config.oauth.asIniFile), {
    issuer: config.oauth.authorizationServer!,
    audience: config.oauth.audience,
    subject,
    scope: [...scope, ...spaces].join(' '),
    ttlSeconds,
  });
  io.stdout.write(`${token}\n`);
  return 0;
}

/**
 * The `space:` scopes of `--space` (repeatable): `personal`, a space's id, or its name. A name is looked up in the
 * database as the tools do (case-insensitive; one of the subject's spaces); ids and `personal` need no database,
 * so a token for them can be issued while a server holds the embedded database.
 */
async function spaceScopes(config: Config, subject: string, selectors: readonly string[]): Promise<string[]> {
  const wanted = selectors.map((selector) => selector.trim());
  if (wanted.some((selector) => selector === '')) throw new UsageError('token issue: --space must name a space (personal, its id or its name)');
  const byIdOrPersonal = (selector: string) =>
    selector.toLowerCase() === PERSONAL_SPACE_ID ? PERSONAL_SPACE_SCOPE : isSpaceScope(selector) ? selector : undefined;
  if (wanted.every((selector) => byIdOrPersonal(selector) !== undefined)) return [...new Set(wanted.map((selector) => byIdOrPersonal(selector)!))];
  const storage = await openStorage(config, { warmUp: false });
  try {
    const spaces = await storage.db.withSubject(subject, 'finding the spaces', (trx) => resolveSpaces(trx, subject, wanted, 'read'), { readOnly: true });
    return spaces.map((space) => (space.personal ? PERSONAL_SPACE_SCOPE : space.id));
  } catch (error) {
    if (isServiceError(error) && error.code !== 'DATABASE_ERROR') throw new UsageError(`token issue: --space: ${error.message}`);
    throw error;
  } finally {
    await storage.close();
  }
}

/** "3600", "90s", "45m", "12h", "30d" → seconds. */
export function parseDuration(value: string): number {
  const match = /^(\d+)\s*([smhd]?)$/.exec(value.trim());
  const seconds = match === null ? NaN : Number(match[1]) * { '': 1, s: 1, m: 60, h: 3600, d: 86_400 }[match[2] as '' | 's' | 'm' | 'h' | 'd'];
  if (!Number.isSafeInteger(seconds) || seconds <= 0 || seconds > 366 * 86_400) {
    throw new UsageError(`token issue: --ttl must be a duration such as 3600, 90m, 12h or 30d, at most 366d (got ${JSON.stringify(value)})`);
  }
  return seconds;
}
