import { errors, type CryptoKey, type JWTVerifyGetKey } from 'jose';

/** The built-in authorization server's current signing key, as far as verification needs it. */
export interface CurrentKey {
  readonly kid: string;
  readonly publicKey: CryptoKey;
}

/**
 * Verification keys of the built-in authorization server: only its current key (the state file's), so a token
 * signed before the file was replaced names a key that no longer exists.
 */
export function localKeyResolver(currentKey: () => Promise<CurrentKey>): JWTVerifyGetKey {
  return async (header) => {
    const key = await currentKey();
    if (header.kid !== key.kid) throw new errors.JWKSNoMatchingKey();
    return key.publicKey;
  };
}
