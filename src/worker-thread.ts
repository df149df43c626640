import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * A module next to `from` (an import.meta.url), as the running code is: in source (tsx, vitest) a .ts file,
 * compiled a .js one.
 */
export function siblingModule(name: string, from: string): URL {
  return new URL(`./${name}${fromSource(from) ? '.ts' : '.js'}`, from);
}

/** A worker thread running `entry`; from source it registers tsx's loader before it imports its TypeScript. */
export function startWorker(entry: URL, workerData: unknown): Worker {
  return fromSource(entry.href)
    ? new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`, { eval: true, workerData })
    : new Worker(entry, { workerData });
}

const fromSource = (url: string): boolean => fileURLToPath(url).endsWith('.ts');
