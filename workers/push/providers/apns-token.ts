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
  generation: number
  issuedAt: number
}

interface Slot {
  current: Promise<ProviderToken>
  issuedAt: number
  generation: number
}

export class ApnsTokens {
  readonly #slots = new Map<string, Slot>()
  readonly #now: () => number

  constructor(now: () => number = Date.now) {
    this.#now = now
  }

  static keyOf(teamId: string, keyId: string, p8: string): string {
    return `${teamId}:${keyId}:${crypto.createHash('sha256').update(p8).digest('base64url')}`
  }

  /** The current token, made or refreshed when needed. */
  get(teamId: string, keyId: string, p8: string): Promise<ProviderToken> {
    const key = ApnsTokens.keyOf(teamId, keyId, p8)
    const slot = this.#slots.get(key)
    if (slot && this.#now() - slot.issuedAt < REFRESH_AFTER_MS) return slot.current
    return this.#mint(key, teamId, keyId, p8, (slot?.generation ?? 0) + 1)
  }

  /**
   * APNs said ExpiredProviderToken for `generation`: remake it unless another
   * stream already did. (A token younger than 20 minutes is remade only here,
   * where APNs itself refused it.)
   */
  refresh(teamId: string, keyId: string, p8: string, generation: number): Promise<ProviderToken> {
    const key = ApnsTokens.keyOf(teamId, keyId, p8)
    const slot = this.#slots.get(key)
    if (slot && slot.generation !== generation) return slot.current
    return this.#mint(key, teamId, keyId, p8, generation + 1)
  }

  #mint(key: string, teamId: string, keyId: string, p8: string, generation: number): Promise<ProviderToken> {
    const issuedAt = this.#now()
    const current = (async () => {
      const signing = await importPKCS8(p8, 'ES256')
      const jwt = await new SignJWT({ iss: teamId, iat: Math.floor(issuedAt / 1000) })
        .setProtectedHeader({ alg: 'ES256', kid: keyId })
        .sign(signing)
      return { jwt, generation, issuedAt }
    })()
    const slot: Slot = { current, issuedAt, generation }
    this.#slots.set(key, slot)
    current.catch(() => {
      if (this.#slots.get(key) === slot) this.#slots.delete(key)
    })
    return current
  }
}

/** The process-wide cache the actors share. */
export const sharedApnsTokens = new ApnsTokens()
