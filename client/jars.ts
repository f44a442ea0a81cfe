// Two cookie jars the helper brings: one over a request's Cookie header that
// collects the response's Set-Cookie headers (node:http, or any framework that
// hands over raw headers), and one over document.cookie in a browser.
import { parseCookieHeader, serializeCookie, type CookieAttributes, type CookieEntry } from './cookie-header.ts'
import { CookieError } from './errors.ts'
import type { ListableCookieJar } from './storage.ts'

/**
 * Headers @supabase/ssr asks for on a response that sets auth cookies: a
 * shared cache must never hand one person's session to another.
 */
export const NO_STORE_HEADERS = Object.freeze({
  'cache-control': 'private, no-cache, no-store, must-revalidate, max-age=0',
  expires: '0',
  pragma: 'no-cache',
})

/** The request's cookies (as changed since) and the Set-Cookie headers to answer with. */
export class HeaderCookieJar implements ListableCookieJar {
  private readonly cookies: Map<string, string>
  private readonly written = new Map<string, string>()

  /** `header`: the request's Cookie header (HTTP/2 may give several). */
  constructor(header?: string | string[] | null) {
    const joined = Array.isArray(header) ? header.join('; ') : header
    this.cookies = new Map(parseCookieHeader(joined).map(({ name, value }) => [name, value]))
  }

  get(name: string): string | undefined {
    return this.cookies.get(name)
  }

  getAll(): CookieEntry[] {
    return [...this.cookies].map(([name, value]) => ({ name, value }))
  }

  set(name: string, value: string, attributes: CookieAttributes): void {
    this.record(name, serializeCookie(name, value, attributes), attributes)
    this.cookies.set(name, value)
  }

  remove(name: string, attributes: CookieAttributes): void {
    this.record(name, serializeCookie(name, '', { ...attributes, maxAge: 0 }), attributes)
    this.cookies.delete(name)
  }

  /** One Set-Cookie per cookie written, in the order written; a cookie written twice is sent once, as last written. */
  setCookieHeaders(): string[] {
    return [...this.written.values()]
  }

  // A browser tells cookies apart by name, domain and path (RFC 6265 5.3 step 11).
  private record(name: string, header: string, attributes: CookieAttributes): void {
    const identity = `${name}\u0000${attributes.domain ?? ''}\u0000${attributes.path ?? ''}`
    this.written.delete(identity)
    this.written.set(identity, header)
  }
}

/** document.cookie as a jar; the browser itself keeps what is written. */
export function documentCookieJar(): ListableCookieJar {
  const doc = (globalThis as { document?: { cookie: string } }).document
  if (!doc) throw new CookieError('no_document', 'there is no document.cookie here: in server code, pass a jar over the request (HeaderCookieJar or your framework\'s cookies)')
  const all = () => parseCookieHeader(doc.cookie)
  return {
    getAll: all,
    get: (name) => all().find((cookie) => cookie.name === name)?.value,
    set(name, value, attributes) {
      doc.cookie = serializeCookie(name, value, attributes)
    },
    remove(name, attributes) {
      doc.cookie = serializeCookie(name, '', { ...attributes, maxAge: 0 })
    },
  }
}
