// The session cookie format of supabase-js's server-side helpers (@supabase/ssr
// 0.4 and later; SPEC sections 5.4 and 9): the value auth-js stores, written as
// "base64-" + base64url of its UTF-8 bytes, split into cookies `<key>`, or
// `<key>.0`, `<key>.1`, ... when it is longer than one cookie may be.
import { CookieError } from './errors.ts'
import type { CookieEntry } from './cookie-header.ts'

/** Longest cookie value written, counted after percent-encoding: under browsers' 4096 bytes per cookie with room for the name and attributes. */
export const MAX_CHUNK_SIZE = 3180

export const BASE64_PREFIX = 'base64-'

/** supabase-js's default storage key for a project URL: `sb-<first label of the host>-auth-token`. */
export function storageKeyFor(supabaseUrl: string): string {
  let host: string
  try {
    host = new URL(supabaseUrl).hostname
  } catch {
    throw new CookieError('invalid_supabase_url', `not a URL: ${JSON.stringify(supabaseUrl)}`)
  }
  return `sb-${host.split('.')[0]}-auth-token`
}

/**
 * The storage key to give supabase-js (`auth.storageKey`) or @supabase/ssr
 * (`cookieOptions.name`) for a Baseplane project: under path routing
 * (`https://host/project/<ref>`) every project shares the host, and so
 * supabase-js's default key, so the ref names it (`sb-<ref>-auth-token`) and
 * two projects' sessions never share a cookie; under subdomain routing the
 * default is already the project's own.
 */
export function projectStorageKey(baseUrl: string): string {
  const key = storageKeyFor(baseUrl)
  const ref = /^\/project\/([a-z][a-z0-9]{2,39})\/?$/.exec(new URL(baseUrl).pathname)?.[1]
  return ref === undefined ? key : `sb-${ref}-auth-token`
}

/** `name` is the key itself or one of its numbered chunks (`.0`, `.1`, ...; `.00` is not one). */
export function isChunkOf(name: string, key: string): boolean {
  if (name === key) return true
  if (!name.startsWith(`${key}.`)) return false
  return /^(0|[1-9][0-9]*)$/.test(name.slice(key.length + 1))
}

export function encodeSessionValue(value: string): string {
  return BASE64_PREFIX + toBase64Url(value)
}

/**
 * The stored value, from a cookie value: a `base64-` value that does not
 * decode to JSON (chunks of two different writes, a mangled cookie) is no
 * value at all; a value without the prefix is a cookie from before the
 * encoding (or `cookieEncoding: "raw"`) and is returned as it is.
 */
export function decodeSessionValue(value: string): string | null {
  if (!value.startsWith(BASE64_PREFIX)) return value
  const decoded = fromBase64Url(value.slice(BASE64_PREFIX.length))
  if (decoded === null) return null
  try {
    JSON.parse(decoded)
  } catch {
    return null
  }
  return decoded
}

/** The cookies that hold `value` under `key`: one when it fits, numbered chunks otherwise. */
export function chunkCookies(key: string, value: string, size = MAX_CHUNK_SIZE): CookieEntry[] {
  let rest = encodeURIComponent(value)
  if (rest.length <= size) return [{ name: key, value }]
  const chunks: string[] = []
  while (rest.length > 0) {
    let head = rest.slice(0, size)
    // Never cut a %XX escape, nor the escapes of one multi-byte UTF-8 character.
    const escape = head.lastIndexOf('%')
    if (escape > size - 3) head = head.slice(0, escape)
    for (;;) {
      try {
        chunks.push(decodeURIComponent(head))
        break
      } catch {
        if (head.length <= 3 || head.at(-3) !== '%') throw new CookieError('invalid_cookie_option', `cannot split the value of ${key} into cookies`)
        head = head.slice(0, -3)
      }
    }
    rest = rest.slice(head.length)
  }
  return chunks.map((chunk, i) => ({ name: `${key}.${i}`, value: chunk }))
}

/**
 * The value stored under `key`, joined again: a non-empty unsuffixed cookie
 * wins; otherwise `.0`, `.1`, ... up to the first missing or empty one.
 */
export function combineChunks(key: string, read: (name: string) => string | null | undefined): string | null {
  const whole = read(key)
  if (whole) return whole
  let joined = ''
  for (let i = 0; ; i++) {
    const chunk = read(`${key}.${i}`)
    if (!chunk) break
    joined += chunk
  }
  return joined === '' ? null : joined
}

// base64url without padding (RFC 4648 section 5) of the UTF-8 bytes, with
// what both Node 20 and browsers have (TextEncoder, btoa), so this runs in both.
function toBase64Url(text: string): string {
  const bytes = new TextEncoder().encode(text)
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

function fromBase64Url(encoded: string): string | null {
  // @supabase/ssr's decoder skips whitespace and padding; anything else outside the alphabet is a broken value.
  const compact = encoded.replace(/[\s=]/g, '')
  if (!/^[A-Za-z0-9_-]*$/.test(compact) || compact.length % 4 === 1) return null
  const binary = atob(compact.replace(/-/g, '+').replace(/_/g, '/'))
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return null
  }
}
