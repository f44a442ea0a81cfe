// SQL on auth.one_time_tokens: the emailed codes (codes.ts makes and hashes them).
import type { Queryable } from './pool.ts'

export type TokenType = 'confirmation_token' | 'recovery_token' | 'email_change_token_new' | 'email_change_token_current' | 'reauthentication_token'

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

/** Stores the code's hash for (user, type), replacing any earlier one and restarting its count of wrong guesses. */
export async function storeCode(
  db: Queryable,
  userId: string,
  type: TokenType,
  hash: string,
  relatesTo: string,
  flowStateId: string | null,
  redirectTo: string,
): Promise<void> {
  await db.query({
    name: 'auth_issue_code',
    text: `insert into auth.one_time_tokens (user_id, token_type, token_hash, relates_to, flow_state_id, redirect_to)
           values ($1, $2, $3, $4, $5, $6)
           on conflict (user_id, token_type) do update set token_hash = excluded.token_hash, relates_to = excluded.relates_to,
             flow_state_id = excluded.flow_state_id, redirect_to = excluded.redirect_to, failed_attempts = 0,
             created_at = now(), updated_at = now()`,
    values: [userId, type, hash, relatesTo, flowStateId, redirectTo],
  })
}

const CODE_COLUMNS = `id, user_id, token_type::text as token_type, relates_to, flow_state_id, redirect_to,
  created_at < now() - make_interval(secs => $2) as expired, failed_attempts >= $3 as spent`

/** The code a link carries (by hash), locked for this transaction. */
export async function codeByHash(db: Queryable, hash: string, expirySeconds: number, maxAttempts: number): Promise<StoredCode | undefined> {
  const { rows } = await db.query<StoredCode>(`select ${CODE_COLUMNS} from auth.one_time_tokens where token_hash = $1 for update`, [hash, expirySeconds, maxAttempts])
  return rows[0]
}

/** The user's codes of the given types, locked for this transaction. */
export async function codesOfUser(db: Queryable, userId: string, types: TokenType[], expirySeconds: number, maxAttempts: number): Promise<Array<StoredCode & { token_hash: string }>> {
  const { rows } = await db.query<StoredCode & { token_hash: string }>(
    `select ${CODE_COLUMNS}, token_hash from auth.one_time_tokens where user_id = $1 and token_type = any($4::auth.one_time_token_type[]) for update`,
    [userId, expirySeconds, maxAttempts, types],
  )
  return rows
}

/** Whole seconds until a code of this type may be mailed to the user again, or null when it may now. */
export async function secondsUntilNextCode(db: Queryable, userId: string, type: TokenType, minIntervalSeconds: number): Promise<number | null> {
  const { rows } = await db.query<{ wait: number | null }>(
    `select ceil(extract(epoch from (created_at + make_interval(secs => $3)) - now()::timestamp))::int as wait
     from auth.one_time_tokens where user_id = $1 and token_type = $2 and created_at > now()::timestamp - make_interval(secs => $3)`,
    [userId, type, minIntervalSeconds],
  )
  return rows[0]?.wait ?? null
}

/** Counts a wrong guess against each of these codes. */
export async function countWrongGuess(db: Queryable, ids: string[]): Promise<void> {
  if (ids.length > 0) await db.query('update auth.one_time_tokens set failed_attempts = failed_attempts + 1, updated_at = now() where id = any($1::uuid[])', [ids])
}

/** Whether the user has a code of this type stored, whatever its state (expired or spent still count: only use or a new request removes one). */
export async function hasCode(db: Queryable, userId: string, type: TokenType): Promise<boolean> {
  const { rowCount } = await db.query('select 1 from auth.one_time_tokens where user_id = $1 and token_type = $2', [userId, type])
  return (rowCount ?? 0) > 0
}

export async function deleteCodesOfType(db: Queryable, userId: string, types: TokenType[]): Promise<void> {
  await db.query('delete from auth.one_time_tokens where user_id = $1 and token_type = any($2::auth.one_time_token_type[])', [userId, types])
}

export async function deleteCode(db: Queryable, id: string): Promise<void> {
  await db.query('delete from auth.one_time_tokens where id = $1', [id])
}

/** GoTrue's Confirm() clears every code of the user. */
export async function deleteCodesOfUser(db: Queryable, userId: string): Promise<void> {
  await db.query('delete from auth.one_time_tokens where user_id = $1', [userId])
}
