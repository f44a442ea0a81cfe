// The project gate: which key was sent, and who the caller is. The apikey must
// be exactly one of the project's two keys; the Bearer token must verify with
// the project's secret (HS256 only) and name one of the API roles.
import crypto from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { ProjectRecord } from '../lib/catalogue.ts'
import { isApiRole, type RequestIdentity } from '../lib/db/request-transaction.ts'
import { platformErrors } from '../lib/errors.ts'
import { verifyJwt } from '../lib/jwt.ts'

export type KeyRole = 'anon' | 'service_role'

interface Verified {
  claims: Record<string, unknown>
  /** Milliseconds since the epoch; Infinity when the token carries no exp. */
  expiresAt: number
}

function equalStrings(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && crypto.timingSafeEqual(left, right)
}

export function keyRoleOf(project: ProjectRecord, apikey: string): KeyRole | undefined {
  if (equalStrings(apikey, project.anonKey)) return 'anon'
  if (equalStrings(apikey, project.serviceRoleKey)) return 'service_role'
  return undefined
}

export class Gate {
  // Verified tokens by secret and token, so a steady client costs one HMAC per token, not per request.
  readonly #verified = new LRUCache<string, Verified>({ max: 50000 })

  async #verify(secret: string, token: string): Promise<Record<string, unknown>> {
    const key = `${secret}\0${token}`
    const hit = this.#verified.get(key)
    if (hit !== undefined && hit.expiresAt > Date.now()) return hit.claims
    if (hit !== undefined) this.#verified.delete(key)
    const claims = await verifyJwt(secret, token)
    const expiresAt = typeof claims.exp === 'number' ? claims.exp * 1000 : Infinity
    this.#verified.set(key, { claims, expiresAt })
    return claims
  }

  /** The key role of the `apikey` header; throws 401 when it is missing or not this project's. */
  apikeyRole(project: ProjectRecord, apikey: string | undefined): KeyRole {
    if (!apikey) throw platformErrors.noApiKey()
    const role = keyRoleOf(project, apikey)
    if (role === undefined) throw platformErrors.invalidApiKey()
    return role
  }

  /**
   * The caller: the Bearer token's claims when one is sent, else the apikey's.
   * `authorization` is the raw header value.
   */
  async identify(project: ProjectRecord, apikey: string, authorization: string | undefined): Promise<RequestIdentity> {
    let token = apikey
    if (authorization !== undefined && authorization !== '') {
      const match = /^bearer\s+(\S+)\s*$/i.exec(authorization)
      if (!match) throw platformErrors.badJwt('Authorization header must be "Bearer <token>"')
      token = match[1]!
    }
    const claims = await this.#verify(project.jwtSecret, token)
    if (!isApiRole(claims.role)) throw platformErrors.badJwt('role claim must be anon, authenticated or service_role')
    return { role: claims.role, claims }
  }
}
