import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { databaseError } from '../errors.js';

/**
 * PGlite has no lock of its own: a second process opening the same data folder (a CLI command while the server
 * runs) would write to it at the same time and corrupt it. So a process that opens the folder holds a lock file
 * naming its process id and host; a lock left by a process that no longer runs (killed, or a container recreated
 * under another host name) is taken over.
 */
const LOCK_FILE = 'memory-service.lock';

interface Holder {
  readonly pid: number;
  readonly host: string;
}

/** Takes the folder's lock or throws DATABASE_ERROR naming the process that holds it; returns the release. */
export function lockDataFolder(dataDir: string): () => void {
  const path = join(dataDir, LOCK_FILE);
  const me: Holder = { pid: process.pid, host: hostname() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(path, JSON.stringify(me), { flag: 'wx', mode: 0o600 });
      return () => {
        if (sameHolder(readHolder(path), me)) rmSync(path, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = readHolder(path);
    if (holder !== undefined && isRunning(holder, me)) {
      throw databaseError(
        `the data folder ${dataDir} is in use by another memory-service process (pid ${holder.pid}): PGlite allows one process ` +
          `at a time, so stop the server first (or use PostgreSQL, DatabaseUrl). If no such process runs, delete ${path}`,
      );
    }
    rmSync(path, { force: true });
  }
  throw databaseError(`the data folder ${dataDir} could not be locked (${path} keeps reappearing)`);
}

function readHolder(path: string): Holder | undefined {
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as Partial<Holder>;
    return typeof value.pid === 'number' && typeof value.host === 'string' ? { pid: value.pid, host: value.host } : undefined;
  } catch {
    return undefined;
  }
}

const sameHolder = (a: Holder | undefined, b: Holder): boolean => a !== undefined && a.pid === b.pid && a.host === b.host;

/**
 * Another live process on this host. Our own pid means a lock left by an earlier process that had the same pid
 * (a container's pid 1 after a restart); another host name means one that cannot be checked from here and, a
 * data folder being local, an earlier container.
 */
function isRunning(holder: Holder, me: Holder): boolean {
  if (holder.host !== me.host || holder.pid === me.pid) return false;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
