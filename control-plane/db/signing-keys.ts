// SQL on the catalogue's signing keys (baseplane.signing_keys,
// sql/catalogue/0008). What a key does at a moment follows from its
// timestamps (lib/jwt.ts signingKeyState); these statements only set them.
import type { SigningAlg } from '../../lib/jwt.ts'
import type { Queryable } from './queryable.ts'

/** One change of a project's keys at a time, whichever process makes it (until the transaction ends). */
export async function lockSigningKeys(db: Queryable, ref: string): Promise<void> {
  await db.query(`select pg_advisory_xact_lock(hashtext('baseplane.signing_keys'), hashtext($1))`, [ref])
}

/** A new key, published now, signing `leadSeconds` from now. */
export async function insertSigningKey(db: Queryable, ref: string, key: { kid: string; alg: SigningAlg; privateJwk: object }, leadSeconds: number): Promise<void> {
  await db.query(
    `insert into baseplane.signing_keys (kid, ref, alg, private_jwk, signs_from) values ($1, $2, $3, $4, now() + make_interval(secs => $5))`,
    [key.kid, ref, key.alg, JSON.stringify(key.privateJwk), leadSeconds],
  )
}

/** Every project's keys whose last token has expired. */
export async function deleteDroppedKeys(db: Queryable): Promise<void> {
  await db.query('delete from baseplane.signing_keys where drops_at <= now()')
}

/** One project's keys whose last token has expired. */
export async function deleteDroppedKeysOf(db: Queryable, ref: string): Promise<void> {
  await db.query('delete from baseplane.signing_keys where ref = $1 and drops_at <= now()', [ref])
}

/** The project's newest key (the one not retiring), and whether it still waits to sign. */
export async function newestSigningKey(db: Queryable, ref: string): Promise<{ kid: string; alg: SigningAlg; waiting: boolean; signs_from: Date } | undefined> {
  const { rows } = await db.query<{ kid: string; alg: SigningAlg; waiting: boolean; signs_from: Date }>(
    `select kid, alg, signs_from > now() as waiting, signs_from from baseplane.signing_keys
      where ref = $1 and retires_at is null`,
    [ref],
  )
  return rows[0]
}

/** Moves the retirement of the key the waiting one replaces to now, its drop `expirySeconds` later. */
export async function retireWaitingPredecessorNow(db: Queryable, ref: string, expirySeconds: number): Promise<void> {
  await db.query(
    `update baseplane.signing_keys set retires_at = now(), drops_at = now() + make_interval(secs => $2)
      where ref = $1 and retires_at is not null and retires_at > now()`,
    [ref, expirySeconds],
  )
}

export async function signFromNow(db: Queryable, kid: string): Promise<void> {
  await db.query('update baseplane.signing_keys set signs_from = now() where kid = $1', [kid])
}

/** The newest key retires `leadSeconds` from now (when its successor signs) and drops `expirySeconds` after that. */
export async function retireNewestKey(db: Queryable, ref: string, leadSeconds: number, expirySeconds: number): Promise<void> {
  await db.query(
    `update baseplane.signing_keys
        set retires_at = now() + make_interval(secs => $2), drops_at = now() + make_interval(secs => $2 + $3)
      where ref = $1 and retires_at is null`,
    [ref, leadSeconds, expirySeconds],
  )
}
