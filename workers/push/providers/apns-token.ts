// APNs provider tokens (ES256 JWT: kid = key id, iss = team id, iat). Apple:
// "Refresh your token no more than once every 20 minutes and no less than once
// every 60 minutes." One token per (team, key), shared by every project and
// session of this process, refreshed at 50 minutes; after an
// ExpiredProviderToken it is remade once, guarded by a generation counter so
// many failed streams mint one new token, not one each.
import crypto from 'node:crypto'
import { SignJWT, importPKCS8 } from 'jose'

export const REFRESH_AFTER_MS = 50 * 60 * 1000
export const MIN_REFRESH_MS = 20 * 60 * 1000

export interface ProviderToken {
  jwt: string
  /** `bearer <jwt>`: the authorization header, made once rather than per request. */
  authorization: string
  generation: number
  issuedAt: number
}

interface Slot {
  current: Promise<ProviderToken>
  /** The token once made: read without a promise on every request. */
  made: ProviderToken | undefined
  issuedAt: number
  generation: number
}

/** The tokens of one (team, key, p8), with the cache key worked out once rather than per request. */
export interface ApnsSigner {
  /** The current token if it is made and not yet due for refresh (the per-request path). */
  ready(): ProviderToken | undefined
  get(): Promise<ProviderToken>
  refresh(generation: number): Promise<ProviderToken>
}

export class ApnsTokens {
  readonly #slots = new Map<string, Slot>()
  readonly #now: () => number

  constructor(now: () => number = Date.now) {
    this.#now = now
  }

  static #keyOf(teamId: string, keyId: string, p8: string): string {
    return `${teamId}:${keyId}:${crypto.createHash('sha256').update(p8).digest('base64url')}`
  }

  /** The tokens of one key; APNs providers hold one each, so the cache key is hashed once. */
  signer(teamId: string, keyId: string, p8: string): ApnsSigner {
    const key = ApnsTokens.#keyOf(teamId, keyId, p8)
    return {
      ready: () => {
        const made = this.#slots.get(key)?.made
        return made !== undefined && this.#now() - made.issuedAt < REFRESH_AFTER_MS ? made : undefined
      },
      get: () => {
        const slot = this.#slots.get(key)
        if (slot && this.#now() - slot.issuedAt < REFRESH_AFTER_MS) return slot.current
        return this.#mint(key, teamId, keyId, p8, (slot?.generation ?? 0) + 1)
      },
      // APNs said ExpiredProviderToken for `generation`: remade unless another stream already
      // did. (A token younger than 20 minutes is remade only here, where APNs itself refused it.)
      refresh: (generation) => {
        const slot = this.#slots.get(key)
        if (slot && slot.generation !== generation) return slot.current
        return this.#mint(key, teamId, keyId, p8, generation + 1)
      },
    }
  }

  #mint(key: string, teamId: string, keyId: string, p8: string, generation: number): Promise<ProviderToken> {
    const issuedAt = this.#now()
    const current = (async () => {
      const signing = await importPKCS8(p8, 'ES256')
      const jwt = await new SignJWT({ iss: teamId, iat: Math.floor(issuedAt / 1000) })
        .setProtectedHeader({ alg: 'ES256', kid: keyId })
        .sign(signing)
      return { jwt, authorization: `bearer ${jwt}`, generation, issuedAt }
    })()
    const slot: Slot = { current, made: undefined, issuedAt, generation }
    this.#slots.set(key, slot)
    current.then(
      (token) => {
        slot.made = token
      },
      () => {
        if (this.#slots.get(key) === slot) this.#slots.delete(key)
      },
    )
    return current
  }
}

/** The process-wide cache the actors share. */
export const sharedApnsTokens = new ApnsTokens()
