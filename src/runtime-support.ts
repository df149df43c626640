/** The oldest Node.js line still supported upstream (20 reached its end of life in April 2026). */
const OLDEST_SUPPORTED_MAJOR = 22;

/** What to tell an operator running an end-of-life Node.js (it still works), or undefined on a supported line. */
export function endOfLifeNotice(version: string = process.versions.node): string | undefined {
  const major = Number(version.split('.')[0]);
  if (major >= OLDEST_SUPPORTED_MAJOR) return undefined;
  return `Node.js ${version} is past its end of life and gets no security fixes; memory-service supports Node.js 22, 24 and 26: upgrade`;
}

/**
 * Imports `load` without the "Unsupported runtime" line oidc-provider prints on an end-of-life Node.js, which
 * serve already reports once in its own words (endOfLifeNotice). Other warnings pass.
 */
export async function withoutRuntimeWarning<T>(load: () => Promise<T>): Promise<T> {
  if (endOfLifeNotice() === undefined) return load();
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!String(args[0]).includes('oidc-provider WARNING: Unsupported runtime')) warn(...args);
  };
  try {
    return await load();
  } finally {
    console.warn = warn;
  }
}
