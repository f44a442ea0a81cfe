// The storage supabase-js keeps its session in (`createClient(url, key, {auth:
// {storage}})`), over cookies, in @supabase/ssr's format: in server code over a
// request's cookie jar, in a browser over document.cookie. And the `cookies`
// methods @supabase/ssr's own clients take, over the same jars.
import { resolveCookieOptions, type CookieAttributes, type CookieEntry, type CookieOptions, type ResolvedCookieOptions } from './cookie-header.ts'
import { chunkCookies, combineChunks, decodeSessionValue, encodeSessionValue, isChunkOf } from './session-format.ts'
import { documentCookieJar } from './jars.ts'

/**
 * Where the helper reads the request's cookies and writes the response's.
 * Express (`req.cookies`, `res.cookie`, `res.clearCookie`), Next.js
 * (`cookies()`), Hono (`getCookie`, `setCookie`, `deleteCookie`) and a bare
 * node:http server (`HeaderCookieJar`) each fit in a few lines.
 */
export interface CookieJar {
  /** The cookie's value, or nothing when the request has none. */
  get(name: string): string | null | undefined
  set(name: string, value: string, attributes: CookieAttributes): void
  /** Expire the cookie: `attributes` carries `maxAge: 0` and the domain and path it was written with. */
  remove(name: string, attributes: CookieAttributes): void
}

/** A jar that can also list every cookie, as @supabase/ssr's `getAll` needs. */
export interface ListableCookieJar extends CookieJar {
  getAll(): CookieEntry[]
}

/** auth-js's SupportedStorage, with its `isServer` hint. */
export interface CookieStorage {
  /** true on the server: auth-js then warns that `session.user` read from cookies is not verified. */
  readonly isServer: boolean
  getItem(key: string): string | null
  setItem(key: string, value: string): void
  removeItem(key: string): void
}

/** @supabase/ssr's `cookies` option (its CookieMethodsServer and CookieMethodsBrowser). */
export interface SsrCookieMethods {
  getAll(): CookieEntry[]
  setAll(cookies: Array<{ name: string; value: string; options: CookieAttributes }>, headers?: Record<string, string>): void
}

/**
 * Session storage over one request's cookies. Reads see this storage's own
 * writes, since a framework's request cookies usually do not; so make one per
 * request.
 */
export function cookieStorage(jar: CookieJar, options?: CookieOptions): CookieStorage {
  return new ChunkedStorage(rememberWrites(jar), resolveCookieOptions(options), true)
}

/** Session storage over document.cookie, for supabase-js in a browser; `domain` shares it with sibling subdomains. */
export function browserCookieStorage(options?: CookieOptions): CookieStorage {
  return new ChunkedStorage(documentCookieJar(), resolveCookieOptions(options), false)
}

/**
 * `cookies` for @supabase/ssr's createServerClient (over the request's jar)
 * or createBrowserClient (default: document.cookie). Attributes are the ones
 * @supabase/ssr passes (its `cookieOptions`): set `domain` there.
 */
export function cookieMethods(jar: ListableCookieJar = documentCookieJar()): SsrCookieMethods {
  return {
    getAll: () => jar.getAll(),
    setAll(cookies) {
      for (const { name, value, options } of cookies) {
        if (value) jar.set(name, value, options)
        else jar.remove(name, options)
      }
    },
  }
}

class ChunkedStorage implements CookieStorage {
  constructor(
    private readonly jar: CookieJar,
    private readonly options: ResolvedCookieOptions,
    readonly isServer: boolean,
  ) {}

  getItem(key: string): string | null {
    const joined = combineChunks(key, (name) => this.jar.get(name))
    return joined === null ? null : decodeSessionValue(joined)
  }

  setItem(key: string, value: string): void {
    this.write(key, chunkCookies(key, encodeSessionValue(value)))
  }

  removeItem(key: string): void {
    this.write(key, [])
  }

  /** Writes `next` and expires every other cookie of `key`, so that no stale chunk outlives a shorter session. */
  private write(key: string, next: CookieEntry[]): void {
    const keep = new Set(next.map(({ name }) => name))
    const stale = this.present(key).filter((name) => !keep.has(name))
    const removal: CookieAttributes = { ...this.options, maxAge: 0 }
    // A cookie written before `domain` was set is host-only: expiring only the
    // parent-domain one would leave it to bring the old session back. The
    // host-only expiry goes first, as @supabase/ssr 0.12.7 orders it (its
    // #256): a jar keyed by name alone (Next.js ResponseCookies) keeps the last
    // write, which must be the parent-domain expiry of the cookie we set.
    if (removal.domain) {
      const { domain: _parent, ...hostOnly } = removal
      for (const name of stale) this.jar.remove(name, hostOnly)
    }
    for (const name of stale) this.jar.remove(name, removal)
    for (const { name, value } of next) this.jar.set(name, value, this.options)
  }

  /** The key's cookies the jar has: all of them when it can list them, else the whole one and the run of chunks from `.0`. */
  private present(key: string): string[] {
    if (isListable(this.jar)) return this.jar.getAll().filter(({ name, value }) => value && isChunkOf(name, key)).map(({ name }) => name)
    const names = this.jar.get(key) ? [key] : []
    for (let i = 0; this.jar.get(`${key}.${i}`); i++) names.push(`${key}.${i}`)
    return names
  }
}

function isListable(jar: CookieJar): jar is ListableCookieJar {
  return typeof (jar as Partial<ListableCookieJar>).getAll === 'function'
}

/** The jar as this request sees it after its own writes. */
function rememberWrites(jar: CookieJar): CookieJar {
  const written = new Map<string, string | null>()
  const view: CookieJar = {
    get: (name) => (written.has(name) ? written.get(name) : jar.get(name)),
    set(name, value, attributes) {
      written.set(name, value)
      jar.set(name, value, attributes)
    },
    remove(name, attributes) {
      written.set(name, null)
      jar.remove(name, attributes)
    },
  }
  if (!isListable(jar)) return view
  const getAll = (): CookieEntry[] => {
    const all = new Map(jar.getAll().map(({ name, value }) => [name, value]))
    for (const [name, value] of written) {
      if (value === null) all.delete(name)
      else all.set(name, value)
    }
    return [...all].map(([name, value]) => ({ name, value }))
  }
  return { ...view, getAll } as ListableCookieJar
}
