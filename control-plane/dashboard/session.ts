// Dashboard sign-in: the operator gives the platform admin token once; the
// browser then holds a signed, expiring, HttpOnly, SameSite=Strict cookie.
// Forms are refused when their Origin is another site's.
import crypto from 'node:crypto'

export const COOKIE = 'bp_dashboard'
const LIFETIME_SECONDS = 12 * 3600

function mac(adminToken: string, expires: number): string {
  return crypto.createHmac('sha256', adminToken).update(`dashboard:${expires}`).digest('base64url')
}

export function tokenMatches(given: string, adminToken: string): boolean {
  const a = crypto.createHash('sha256').update(given).digest()
  const b = crypto.createHash('sha256').update(adminToken).digest()
  return crypto.timingSafeEqual(a, b)
}

export function sessionCookie(adminToken: string, secure: boolean): string {
  const expires = Math.floor(Date.now() / 1000) + LIFETIME_SECONDS
  return `${COOKIE}=${expires}.${mac(adminToken, expires)}; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=${LIFETIME_SECONDS}${secure ? '; Secure' : ''}`
}

export function clearedCookie(): string {
  return `${COOKIE}=; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=0`
}

export function signedIn(cookieHeader: string | undefined, adminToken: string): boolean {
  const value = (cookieHeader ?? '')
    .split(';')
    .map((part) => part.trim())
    .find((part) => part.startsWith(`${COOKIE}=`))
    ?.slice(COOKIE.length + 1)
  if (!value) return false
  const [expiresText, signature] = value.split('.')
  const expires = Number(expiresText)
  if (!Number.isInteger(expires) || expires < Date.now() / 1000 || !signature) return false
  const expected = Buffer.from(mac(adminToken, expires))
  const given = Buffer.from(signature)
  return expected.length === given.length && crypto.timingSafeEqual(expected, given)
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
