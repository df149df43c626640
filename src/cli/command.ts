import { UserStore, usersFilePath } from '../auth/authorization-server/user-store.js';
import { subjectProblem } from '../auth/subject.js';
import type { Config } from '../config/load-config.js';

export type CommandIO = { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream };

/** A bad command line: printed without a stack, exit code 2. */
export class UsageError extends Error {}

/** Who a command acts for: `--user NAME` (a user of the built-in authorization server) or `--sub SUBJECT`. */
export interface SubjectOptions {
  readonly user: string | undefined;
  readonly sub: string | undefined;
}

/**
 * The subject owning the memories a command reaches: a user's id for `--user NAME`, else `--sub SUBJECT` (one the
 * verifier would accept). `--sub` naming a user by name is refused: the memories that user saves after signing in
 * belong to their id, and a token for the name would reach other ones.
 */
export function subjectOption(options: SubjectOptions, command: string, config: Config): string {
  const user = options.user?.trim();
  const sub = options.sub?.trim();
  if (user !== undefined && sub !== undefined) throw new UsageError(`${command}: give --user NAME or --sub SUBJECT, not both`);
  const users = new UserStore(usersFilePath(config.dataDir));
  if (user !== undefined) {
    if (!config.oauth.builtIn) {
      throw new UsageError(`${command}: --user names a user of the built-in authorization server, which is not the configured one; give --sub SUBJECT (the token's sub)`);
    }
    const found = users.findByName(user);
    if (found === undefined) throw new UsageError(`${command}: no user named ${JSON.stringify(user)} (memory-service user list shows them)`);
    return found.id;
  }
  if (sub === undefined || sub === '') throw new UsageError(`${command}: --user NAME or --sub SUBJECT is required`);
  const problem = subjectProblem(sub);
  if (problem !== undefined) throw new UsageError(`${command}: --sub is not a usable subject: the ${problem}`);
  const named = config.oauth.builtIn ? users.findByName(sub) : undefined;
  if (named !== undefined && named.id !== sub) {
    throw new UsageError(
      `${command}: ${JSON.stringify(sub)} is the name of a user; the memories they save after signing in belong to their id ${named.id}. ` +
        `Give --user ${named.name} (or --sub ${named.id})`,
    );
  }
  return sub;
}

/** A whole-number option from `min` to `max`, or `fallback` when absent. */
export function integerOption(value: string | undefined, fallback: number, min: number, max: number, name: string): number {
  const number = Number(value ?? fallback);
  if (!Number.isInteger(number) || number < min || number > max) {
    throw new UsageError(`${name} must be a whole number from ${min} to ${max} (got ${JSON.stringify(value)})`);
  }
  return number;
}

/** A start that cannot go on (a port in use, a database out of reach): one line saying what to change, exit code 1. */
export class StartError extends Error {}
