// Emailed codes and links (auth.one_time_tokens). A code is six random
// digits; the stored hash is hex(sha224(email + code)), which the link also
// carries (prefixed `pkce_` in a PKCE flow). A code is spent by use, by its
// expiry, or after five wrong guesses from any address (SPEC 3, 8.2);
// issuing a new code of the same type replaces it and restarts the count.
import crypto from 'node:crypto'
import type pg from 'pg'

export type TokenType = 'confirmation_token' | 'recovery_token' | 'email_change_token_new'

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
  client: pg.ClientBase,
  userId: string,
  type: TokenType,
  relatesTo: string,
  options: { flowStateId?: string | null; redirectTo: string },
): Promise<IssuedCode> {
  const code = newCode()
  const hash = tokenHash(relatesTo, code)
  await client.query({
    name: 'auth_issue_code',
    text: `insert into auth.one_time_tokens (user_id, token_type, token_hash, relates_to, flow_state_id, redirect_to)
           values ($1, $2, $3, $4, $5, $6)
           on conflict (user_id, token_type) do update set token_hash = excluded.token_hash, relates_to = excluded.relates_to,
             flow_state_id = excluded.flow_state_id, redirect_to = excluded.redirect_to, failed_attempts = 0,
             created_at = now(), updated_at = now()`,
    values: [userId, type, hash, relatesTo, options.flowStateId ?? null, options.redirectTo],
  })
  return { code, hash, linkToken: options.flowStateId ? `pkce_${hash}` : hash }
}

export interface StoredCode {
  id: string
  user_id: string
  token_type: TokenType
  relates_to: string
  flow_state_id: string | null
  redirect_to: string | null
  expired: boolean
  spent: boolean
}

const CODE_COLUMNS = `id, user_id, token_type::text as token_type, relates_to, flow_state_id, redirect_to,
  created_at < now() - make_interval(secs => $2) as expired, failed_attempts >= $3 as spent`

/** The code a link carries (by hash), locked for this transaction. */
export async function codeByHash(client: pg.ClientBase, hash: string, expirySeconds: number, maxAttempts: number): Promise<StoredCode | undefined> {
  const { rows } = await client.query<StoredCode>(
    `select ${CODE_COLUMNS} from auth.one_time_tokens where token_hash = $1 for update`,
    [hash, expirySeconds, maxAttempts],
  )
  return rows[0]
}

/** The user's codes of the given types, locked for this transaction. */
export async function codesOfUser(client: pg.ClientBase, userId: string, types: TokenType[], expirySeconds: number, maxAttempts: number): Promise<Array<StoredCode & { token_hash: string }>> {
  const { rows } = await client.query<StoredCode & { token_hash: string }>(
    `select ${CODE_COLUMNS}, token_hash from auth.one_time_tokens where user_id = $1 and token_type = any($4::auth.one_time_token_type[]) for update`,
    [userId, expirySeconds, maxAttempts, types],
  )
  return rows
}

/** Counts a wrong guess against each of these codes. */
export async function countWrongGuess(client: pg.ClientBase, ids: string[]): Promise<void> {
  if (ids.length > 0) await client.query('update auth.one_time_tokens set failed_attempts = failed_attempts + 1, updated_at = now() where id = any($1::uuid[])', [ids])
}

export async function deleteCode(client: pg.ClientBase, id: string): Promise<void> {
  await client.query('delete from auth.one_time_tokens where id = $1', [id])
}

/** GoTrue's Confirm() clears every code of the user. */
export async function deleteCodesOfUser(client: pg.ClientBase, userId: string): Promise<void> {
  await client.query('delete from auth.one_time_tokens where user_id = $1', [userId])
}
