import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Replaces `path` with `contents` so that a reader, or the next start after a crash, finds either the old file
 * or the new one, whole: written to a temporary file beside it, flushed to disk, then renamed over it, and the
 * rename flushed too. When any step fails (a full disk: ENOSPC, a read-only disk) the temporary file is removed,
 * the old file is left as it was, and the error says which file could not be saved and why.
 */
export function writeFileAtomically(path: string, contents: string, mode = 0o600): void {
  let temporary: string | undefined;
  try {
    temporary = writeTemporary(path, contents, mode);
    renameSync(temporary, path);
  } catch (error) {
    if (temporary !== undefined) rmSync(temporary, { force: true });
    const { code } = error as NodeJS.ErrnoException;
    const reason = code === 'ENOSPC' ? 'the disk is full (ENOSPC)' : (error as Error).message;
    throw new Error(`could not save ${path}: ${reason}; the file was left as it was`, { cause: error });
  }
  syncDirectory(dirname(path));
}

/**
 * Puts `contents` at `path` unless a file is already there, whole or not at all: a flushed temporary file is
 * linked into place, which fails if one exists (processes starting together agree on whichever came first).
 * Returns whether this call created it; any other failure propagates as it is, with no temporary file left.
 */
export function createFileExclusively(path: string, contents: string, mode = 0o600): boolean {
  const temporary = writeTemporary(path, contents, mode);
  try {
    linkSync(temporary, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    rmSync(temporary, { force: true });
  }
  syncDirectory(dirname(path));
  return true;
}

/** A flushed temporary file beside `path`; removed again when writing it fails (a full disk leaves a partial one). */
function writeTemporary(path: string, contents: string, mode: number): string {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const fd = openSync(temporary, 'wx', mode);
    try {
      const bytes = Buffer.from(contents, 'utf8');
      for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written, bytes.length - written);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  return temporary;
}

/** Makes the rename itself durable; a directory that cannot be opened for it (some filesystems) is left to the OS. */
function syncDirectory(directory: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(directory, 'r');
    fsyncSync(fd);
  } catch {
    // The new file is in place; only the durability of the rename across a power loss is not forced.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
