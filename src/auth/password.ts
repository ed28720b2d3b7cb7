// Password hashing with argon2id (memory-hard); parameters from [security] PASSWORD_HASH_ALGO,
// by default OWASP's recommendation. Every hash carries its own parameters, so verification
// never depends on the current setting.
import argon2 from 'argon2';
import { DEFAULT_PASSWORD_HASH, type PasswordHashParams } from '../config/config.js';

let options: PasswordHashParams & { type: typeof argon2.argon2id } = {
  type: argon2.argon2id,
  ...DEFAULT_PASSWORD_HASH,
};

/** Sets the parameters of new hashes (the process's configuration, at start-up). */
export function configurePasswordHashing(params: PasswordHashParams): void {
  options = { type: argon2.argon2id, ...params };
}

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, options);
}

/** Constant-time verification; a malformed or empty stored hash never matches. */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  if (!stored) return false;
  try {
    return await argon2.verify(stored, password);
  } catch {
    return false;
  }
}
