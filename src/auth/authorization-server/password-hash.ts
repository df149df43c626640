import { hash, verify, type Algorithm } from '@node-rs/argon2';

// Algorithm is a const enum, which isolated modules cannot import as a value: 2 is Argon2id.
const ARGON2ID = 2 as Algorithm;

/**
 * argon2id with the OWASP-recommended minimum (19 MiB, 2 passes, 1 lane). The native module hashes on
 * libuv's thread pool, so a login never blocks the event loop.
 */
const OPTIONS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

export async function verifyPassword(encoded: string, password: string): Promise<boolean> {
  try {
    return await verify(encoded, password);
  } catch {
    return false;
  }
}

let dummy: Promise<string> | undefined;
/** Spends the same time as a real check, so a login for an unknown user cannot be told apart by timing. */
export async function burnPasswordCheck(password: string): Promise<void> {
  dummy ??= hashPassword('memory-service: no such user');
  await verifyPassword(await dummy, password);
}
