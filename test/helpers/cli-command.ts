import { fileURLToPath } from 'node:url';

/** The repository's root: the CLI's processes start there unless a test says otherwise. */
export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The CLI as operators run it: bin/memory-service.js over dist/, which the global setup rebuilds when src/ changed. */
export const CLI_BIN = fileURLToPath(new URL('../../bin/memory-service.js', import.meta.url));

/** Arguments for `node`: the CLI, then its own. */
export const cliArgs = (...args: string[]): string[] => [CLI_BIN, ...args];
