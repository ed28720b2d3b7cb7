// Password hashing with argon2id (memory-hard), parameters after OWASP's recommendation.
import argon2 from 'argon2';

const OPTIONS = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, OPTIONS);
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
