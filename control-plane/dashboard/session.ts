// Dashboard sign-in: the operator gives the platform admin token once; the
// browser then holds an HttpOnly, SameSite=Strict cookie naming a session row
// in the catalogue (baseplane.dashboard_sessions), so signing out ends it on
// the server and in every process. The cookie is also MACed with the admin
// token: a new token ends every session without a query.
// A member (issue 42) signs in with email and password instead: the same
// cookie names a row of baseplane.member_sessions (control-plane/members.ts).
// Forms are refused when their Origin is another site's.
import crypto from 'node:crypto'
import type pg from 'pg'
import { OPERATOR, type Caller } from '../access.ts'
import type { ControlPlane } from '../control-plane.ts'
import { closeMemberSession, memberCaller, openMemberSession, SESSION_SECONDS, sessionMemberId } from '../members.ts'

export const COOKIE = 'bp_dashboard'
const LIFETIME_SECONDS = 12 * 3600

function mac(adminToken: string, id: string): string {
  return crypto.createHmac('sha256', adminToken).update(`dashboard:${id}`).digest('base64url')
}

function hash(id: string): string {
  return crypto.createHash('sha256').update(id).digest('hex')
}

export function tokenMatches(given: string, adminToken: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest()
  const b = crypto.createHash('sha256').update(adminToken).digest()
  return crypto.timingSafeEqual(a, b)
}

function cookieValue(cookieHeader: string | undefined): string | undefined {
  return (cookieHeader ?? '')
    .split(';')
    .map((part) => part.trim())
    .find((part) => part.startsWith(`${COOKIE}=`))
    ?.slice(COOKIE.length + 1)
}

/** The session id the cookie names, when its MAC holds. */
function sessionId(cookieHeader: string | undefined, adminToken: string): string | undefined {
  const [id, signature] = (cookieValue(cookieHeader) ?? '').split('.')
  if (!id || !signature) return undefined
  const expected = Buffer.from(mac(adminToken, id))
  const given = Buffer.from(signature)
  return expected.length === given.length && crypto.timingSafeEqual(expected, given) ? id : undefined
}

export class Sessions {
  readonly #controlPlane: ControlPlane
  readonly #catalogue: pg.Pool
  readonly #adminToken: string
  readonly #secure: boolean

  constructor(controlPlane: ControlPlane, adminToken: string, secure: boolean) {
    this.#controlPlane = controlPlane
    this.#catalogue = controlPlane.catalogue
    this.#adminToken = adminToken
    this.#secure = secure
  }

  #cookie(id: string, seconds: number): string {
    return `${COOKIE}=${id}.${mac(this.#adminToken, id)}; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=${seconds}${this.#secure ? '; Secure' : ''}`
  }

  /** A new session of the operator; answers its Set-Cookie. */
  async open(): Promise<string> {
    const id = crypto.randomBytes(32).toString('base64url')
    await this.#catalogue.query('delete from baseplane.dashboard_sessions where expires_at < now()')
    await this.#catalogue.query(`insert into baseplane.dashboard_sessions (id_hash, expires_at) values ($1, now() + make_interval(secs => $2))`, [
      hash(id),
      LIFETIME_SECONDS,
    ])
    return this.#cookie(id, LIFETIME_SECONDS)
  }

  /** A new session of a member (signed in with email and password); answers its Set-Cookie. */
  async openForMember(memberId: string): Promise<string> {
    const id = crypto.randomBytes(32).toString('base64url')
    await openMemberSession(this.#controlPlane, memberId, hash(id))
    return this.#cookie(id, SESSION_SECONDS)
  }

  /** Who the cookie signs in: the operator, a member (their roles as they are now), or nobody. */
  async caller(cookieHeader: string | undefined): Promise<Caller | undefined> {
    const id = sessionId(cookieHeader, this.#adminToken)
    if (id === undefined) return undefined
    const { rowCount } = await this.#catalogue.query('select 1 from baseplane.dashboard_sessions where id_hash = $1 and expires_at > now()', [hash(id)])
    if (rowCount === 1) return OPERATOR
    const memberId = await sessionMemberId(this.#controlPlane, hash(id))
    return memberId === undefined ? undefined : memberCaller(this.#controlPlane, memberId)
  }

  async valid(cookieHeader: string | undefined): Promise<boolean> {
    return (await this.caller(cookieHeader)) !== undefined
  }

  /** Ends the cookie's session on the server; answers the Set-Cookie that clears it. */
  async close(cookieHeader: string | undefined): Promise<string> {
    const id = sessionId(cookieHeader, this.#adminToken)
    if (id !== undefined) {
      await this.#catalogue.query('delete from baseplane.dashboard_sessions where id_hash = $1', [hash(id)])
      await closeMemberSession(this.#controlPlane, hash(id))
    }
    return `${COOKIE}=; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=0`
  }
}

/** A form post from this dashboard: its Origin (browsers always send one on POST) names this host. */
export function sameOrigin(origin: string | undefined, host: string | undefined): boolean {
  if (origin === undefined) return true
  try {
    return new URL(origin).host === host
  } catch {
    return false
  }
}
