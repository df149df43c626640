export type CommandIO = { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream };

/** A bad command line: printed without a stack, exit code 2. */
export class UsageError extends Error {}
