import { subjectProblem } from '../auth/subject.js';

export type CommandIO = { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream };

/** A bad command line: printed without a stack, exit code 2. */
export class UsageError extends Error {}

/** `--sub SUBJECT`, required and a subject the verifier would accept (so it can own memories a token reaches). */
export function subjectOption(value: string | undefined, command: string): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`${command}: --sub SUBJECT is required`);
  const problem = subjectProblem(value.trim());
  if (problem !== undefined) throw new UsageError(`${command}: --sub is not a usable subject: the ${problem}`);
  return value.trim();
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
