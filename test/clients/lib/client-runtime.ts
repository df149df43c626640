import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The real clients and the Node 22 they need, installed by `npm ci` (root postinstall) from
 * test/clients/runtime's own lockfile.
 */
const root = fileURLToPath(new URL('../runtime/node_modules/', import.meta.url));

export const NODE22 = `${root}node/bin/node`;
export const CONFORMANCE_CLI = `${root}@modelcontextprotocol/conformance/dist/index.js`;
export const INSPECTOR_CLI = `${root}@modelcontextprotocol/inspector/clients/launcher/build/index.js`;

/** Fails loudly (never skips) when the runtime is missing, so CI cannot pass without running the clients. */
export function requireClientRuntime(): void {
  for (const path of [NODE22, CONFORMANCE_CLI, INSPECTOR_CLI]) {
    if (!existsSync(path)) {
      throw new Error(`${path} is missing: run \`npm ci\` (or \`node test/clients/runtime/install.mjs\`) to install the MCP client runtime`);
    }
  }
}
