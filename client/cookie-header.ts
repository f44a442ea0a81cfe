// Cookie and Set-Cookie headers (RFC 6265 sections 4.1 and 5.2), and the
// options a session cookie is written with. Written here rather than taken
// from the `cookie` package so that this folder loads in a browser as plain
// ES modules, with no bundler and no bare imports. The Set-Cookie text puts
// the attributes in the order @supabase/ssr's serializer does, so that the two
// write the same bytes.
import { CookieError } from './errors.ts'

export type SameSite = 'lax' | 'strict' | 'none'

/** What an app chooses for its session cookies. */
export interface CookieOptions {
  /** `parent.example` shares the session with every subdomain of it; unset: this host only. */
  domain?: string
  path?: string
  secure?: boolean
  sameSite?: SameSite
  /** Seconds; a removal always writes 0. */
  maxAge?: number
  httpOnly?: boolean
}

/**
 * The attributes of one Set-Cookie: the helper's own, or those @supabase/ssr
 * hands to `setAll` (the `cookie` package's serialize options).
 */
export interface CookieAttributes {
  domain?: string
  path?: string
  maxAge?: number
  expires?: Date
  httpOnly?: boolean
  secure?: boolean
  sameSite?: boolean | 'lax' | 'strict' | 'none'
  partitioned?: boolean
  priority?: 'low' | 'medium' | 'high'
}

export interface CookieEntry {
  name: string
  value: string
}

/** @supabase/ssr's DEFAULT_COOKIE_OPTIONS: readable by the browser client, kept 400 days (Chrome's cap). */
export const DEFAULT_COOKIE_OPTIONS: Readonly<{ path: string; sameSite: SameSite; httpOnly: boolean; maxAge: number }> = Object.freeze({
  path: '/',
  sameSite: 'lax',
  httpOnly: false,
  maxAge: 400 * 24 * 60 * 60,
})

export type ResolvedCookieOptions = Readonly<CookieOptions & typeof DEFAULT_COOKIE_OPTIONS>

// RFC 6265 4.1.1 token, widened as browsers accept it (any visible ASCII but `=`, `;`).
const NAME = /^[\u0021-\u003A\u003C\u003E-\u007E]+$/
// cookie-octet after percent-encoding, plus the comma, backslash and DQUOTE browsers keep.
const VALUE = /^[\u0021-\u003A\u003C-\u007E]*$/
// RFC 1034 labels; a leading dot is ignored by browsers (RFC 6265 5.2.3), so it is allowed.
const DOMAIN = /^\.?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i
// RFC 6265 4.1.1 path-value: any CHAR except CTLs or ";".
const PATH = /^[\u0020-\u003A\u003D-\u007E]*$/
const KNOWN = ['domain', 'path', 'secure', 'sameSite', 'maxAge', 'httpOnly']

function invalid(message: string): CookieError {
  return new CookieError('invalid_cookie_option', message)
}

/** The app's options over the defaults, checked once so that a mistake shows where it is made. */
export function resolveCookieOptions(options: CookieOptions = {}): ResolvedCookieOptions {
  if (typeof options !== 'object' || options === null) throw invalid('cookie options must be an object')
  for (const key of Object.keys(options)) {
    if (!KNOWN.includes(key)) throw invalid(`unknown cookie option "${key}" (expected ${KNOWN.join(', ')})`)
  }
  const resolved = { ...DEFAULT_COOKIE_OPTIONS, ...dropUndefined(options) }
  if (resolved.domain !== undefined && (typeof resolved.domain !== 'string' || !DOMAIN.test(resolved.domain))) {
    throw invalid(`cookie option domain must be a host name such as "example.com" (got ${JSON.stringify(resolved.domain)})`)
  }
  if (typeof resolved.path !== 'string' || !resolved.path.startsWith('/') || !PATH.test(resolved.path)) {
    throw invalid(`cookie option path must start with "/" and hold no ";" or control characters (got ${JSON.stringify(resolved.path)})`)
  }
  if (!Number.isInteger(resolved.maxAge) || resolved.maxAge < 0) {
    throw invalid(`cookie option maxAge must be a whole number of seconds, 0 or more (got ${JSON.stringify(resolved.maxAge)})`)
  }
  if (!['lax', 'strict', 'none'].includes(resolved.sameSite)) {
    throw invalid(`cookie option sameSite must be "lax", "strict" or "none" (got ${JSON.stringify(resolved.sameSite)})`)
  }
  for (const flag of ['secure', 'httpOnly'] as const) {
    if (resolved[flag] !== undefined && typeof resolved[flag] !== 'boolean') {
      throw invalid(`cookie option ${flag} must be true or false (got ${JSON.stringify(resolved[flag])})`)
    }
  }
  // Browsers drop a SameSite=None cookie that is not also Secure.
  if (resolved.sameSite === 'none' && resolved.secure !== true) {
    throw invalid('cookie option sameSite "none" needs secure: true (browsers drop SameSite=None cookies without Secure)')
  }
  return Object.freeze(resolved)
}

function dropUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>
}

/** Names and values of a Cookie request header; the first of two same-named cookies wins, as browsers send the most specific first. */
export function parseCookieHeader(header: string | null | undefined): CookieEntry[] {
  const found = new Map<string, string>()
  if (typeof header !== 'string') return []
  for (const pair of header.split(';')) {
    const equals = pair.indexOf('=')
    if (equals === -1) continue
    const name = pair.slice(0, equals).trim()
    if (name === '' || found.has(name)) continue
    found.set(name, decodeValue(pair.slice(equals + 1).trim()))
  }
  return [...found].map(([name, value]) => ({ name, value }))
}

// Values are percent-encoded when written; one that does not decode is kept as sent.
function decodeValue(value: string): string {
  if (!value.includes('%')) return value
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}

/** One Set-Cookie header value (RFC 6265 4.1); the value is percent-encoded. */
export function serializeCookie(name: string, value: string, attributes: CookieAttributes = {}): string {
  if (!NAME.test(name)) throw new CookieError('invalid_cookie_name', `cookie name ${JSON.stringify(name)} is not a token (RFC 6265 4.1.1)`)
  const encoded = value ? encodeURIComponent(value) : ''
  if (!VALUE.test(encoded)) throw invalid(`cookie value for ${name} cannot be written`)
  let header = `${name}=${encoded}`
  if (attributes.maxAge !== undefined) {
    if (!Number.isInteger(attributes.maxAge)) throw invalid(`cookie option maxAge must be a whole number of seconds (got ${JSON.stringify(attributes.maxAge)})`)
    header += `; Max-Age=${attributes.maxAge}`
  }
  if (attributes.domain) {
    if (!DOMAIN.test(attributes.domain)) throw invalid(`cookie option domain must be a host name such as "example.com" (got ${JSON.stringify(attributes.domain)})`)
    header += `; Domain=${attributes.domain}`
  }
  if (attributes.path) {
    if (!PATH.test(attributes.path)) throw invalid(`cookie option path must hold no ";" or control characters (got ${JSON.stringify(attributes.path)})`)
    header += `; Path=${attributes.path}`
  }
  if (attributes.expires) {
    if (!(attributes.expires instanceof Date) || !Number.isFinite(attributes.expires.valueOf())) throw invalid('cookie option expires must be a valid Date')
    header += `; Expires=${attributes.expires.toUTCString()}`
  }
  if (attributes.httpOnly) header += '; HttpOnly'
  if (attributes.secure) header += '; Secure'
  if (attributes.partitioned) header += '; Partitioned'
  if (attributes.priority) header += `; Priority=${titleCase(attributes.priority, ['low', 'medium', 'high'], 'priority')}`
  if (attributes.sameSite) {
    // `true` is the `cookie` package's spelling of Strict.
    const sameSite = attributes.sameSite === true ? 'strict' : attributes.sameSite
    header += `; SameSite=${titleCase(sameSite, ['lax', 'strict', 'none'], 'sameSite')}`
  }
  return header
}

function titleCase(value: unknown, allowed: string[], option: string): string {
  const lower = typeof value === 'string' ? value.toLowerCase() : ''
  if (!allowed.includes(lower)) throw invalid(`cookie option ${option} must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`)
  return lower[0]!.toUpperCase() + lower.slice(1)
}
