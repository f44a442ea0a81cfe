// Signing key pairs (signing-keys.ts has the operations on them): a new pair,
// the first key of a new project, and dropping the keys whose last token has
// expired, which ControlPlane does when it creates a project and when it opens.
import crypto from 'node:crypto'
import type pg from 'pg'
import { platformErrors } from '../lib/errors.ts'
import { isSigningAlg, SIGNING_ALGS, type SigningAlg } from '../lib/jwt.ts'
import * as db from './db/signing-keys.ts'

export const DEFAULT_SIGNING_ALG: SigningAlg = 'ES256'

export function validateSigningAlg(value: string): SigningAlg {
  if (!isSigningAlg(value)) throw platformErrors.invalidArgument(`Unknown signing algorithm "${value}": use ${SIGNING_ALGS.join(' or ')}`)
  return value
}

/** A fresh key pair: ES256 on P-256, RS256 with a 2048-bit modulus (the sizes Supabase's platform offers). */
export function newSigningKey(alg: SigningAlg): { kid: string; alg: SigningAlg; privateJwk: crypto.JsonWebKey } {
  const pair = alg === 'ES256' ? crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }) : crypto.generateKeyPairSync('rsa', { modulusLength: 2048 })
  return { kid: crypto.randomUUID(), alg, privateJwk: pair.privateKey.export({ format: 'jwk' }) }
}

/** A new key of `alg` for the project, published now, signing `leadSeconds` from now; returns its kid. */
export async function insertKey(client: pg.ClientBase, ref: string, alg: SigningAlg, leadSeconds: number): Promise<string> {
  const key = newSigningKey(alg)
  await db.insertSigningKey(client, ref, key, leadSeconds)
  return key.kid
}

/**
 * The first key of a new project, in the transaction that inserts its row. It
 * signs at once: no token of the project exists yet, nor a cached JWKS.
 */
export async function addFirstSigningKey(client: pg.ClientBase, ref: string, alg: SigningAlg = DEFAULT_SIGNING_ALG): Promise<void> {
  await db.lockSigningKeys(client, ref)
  await insertKey(client, ref, alg, 0)
}

/**
 * Deletes keys whose last token has expired. Runs whenever the control plane
 * opens; cheap when there is nothing to do. A project made before signing
 * keys existed gets none here: it signs HS256 (lib/jwt.ts signAccessToken),
 * as before, until its operator rotates one in (`baseplane keys REF
 * --rotate-signing-key`), because its own backends may verify its tokens with
 * the JWT secret and an upgrade must not break them unasked.
 */
export async function dropExpiredSigningKeys(catalogue: pg.Pool): Promise<void> {
  await db.deleteDroppedKeys(catalogue)
}

