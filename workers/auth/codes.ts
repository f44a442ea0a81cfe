// Emailed codes and links (auth.one_time_tokens). A code is six random
// digits; the stored hash is hex(sha224(email + code)), which the link also
// carries (prefixed `pkce_` in a PKCE flow). A code is spent by use, by its
// expiry, or after five wrong guesses from any address (SPEC 3, 8.2);
// issuing a new code of the same type replaces it and restarts the count.
import crypto from 'node:crypto'
import type { Queryable } from './db/pool.ts'
import { storeCode, type TokenType } from './db/one-time-tokens.ts'

export function newCode(): string {
  return crypto.randomInt(0, 1000000).toString().padStart(6, '0')
}

export function tokenHash(email: string, code: string): string {
  return crypto.createHash('sha224').update(email + code).digest('hex')
}

export interface IssuedCode {
  code: string
  hash: string
  /** What goes in the link: the hash, `pkce_`-prefixed in a PKCE flow. */
  linkToken: string
}

/** Stores a new code for (user, type), replacing any earlier one. */
export async function issueCode(
  db: Queryable,
  userId: string,
  type: TokenType,
  relatesTo: string,
  options: { flowStateId?: string | null; redirectTo: string },
): Promise<IssuedCode> {
  const code = newCode()
  const hash = tokenHash(relatesTo, code)
  await storeCode(db, userId, type, hash, relatesTo, options.flowStateId ?? null, options.redirectTo)
  return { code, hash, linkToken: options.flowStateId ? `pkce_${hash}` : hash }
}
