// Redirect addresses (SPEC 1, "Redirect addresses"): a redirect is allowed
// when it is on the site URL's scheme, host and port, or matches an allow-list
// entry. Entries are GoTrue's globs (gobwas/glob compiled with '.' and '/' as
// separators, reference/auth-clients.md §1), matched against the whole raw
// address without its fragment:
//   `*`  any run of characters other than `.` and `/` (so it can match a port)
//   `**` any run of characters, separators included
//   `?`  one character other than `.` and `/`
//   `[abc]`, `[a-z]`, `[!a-z]` one character in (or not in) the class
//   `{a,b}` either alternative (each may hold wildcards)
//   `\c` the character c
// Anything else is refused (GoTrue falls back to the site URL silently; the
// spec asks for a refusal).
import { authErrors } from './errors.ts'
import type { AuthSettings } from './settings.ts'

export class GlobSyntaxError extends Error {}

const SEPARATORS = './'
const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|/]/
const CLASS_SPECIAL = /[\\\]^\-[]/

function literal(c: string): string {
  return REGEX_SPECIAL.test(c) ? `\\${c}` : c
}

/**
 * The glob as an anchored regular expression source. Walks the pattern once;
 * `{` recurses for its alternatives, so nesting works as in gobwas.
 */
function translate(pattern: string): string {
  const chars = Array.from(pattern)
  let i = 0

  function classAt(): string {
    // chars[i] is '['
    i++
    let negate = false
    if (chars[i] === '!') {
      negate = true
      i++
    }
    let body = ''
    let members = 0
    while (i < chars.length && chars[i] !== ']') {
      let lo = chars[i]!
      if (lo === '\\') {
        i++
        if (i >= chars.length) break
        lo = chars[i]!
      }
      i++
      if (chars[i] === '-' && i + 1 < chars.length && chars[i + 1] !== ']') {
        let hi = chars[i + 1]!
        i += 2
        if (hi === '\\') {
          if (i >= chars.length) break
          hi = chars[i]!
          i++
        }
        if (lo.codePointAt(0)! > hi.codePointAt(0)!) throw new GlobSyntaxError(`the range [${lo}-${hi}] is out of order`)
        body += `${CLASS_SPECIAL.test(lo) ? `\\${lo}` : lo}-${CLASS_SPECIAL.test(hi) ? `\\${hi}` : hi}`
      } else {
        body += CLASS_SPECIAL.test(lo) ? `\\${lo}` : lo
      }
      members++
    }
    if (i >= chars.length) throw new GlobSyntaxError('a [ is never closed by ]')
    if (members === 0) throw new GlobSyntaxError('[] holds no character')
    i++
    return negate ? `[^${body}]` : `[${body}]`
  }

  /** Until the end, or (inside braces) a `,` or `}` at this level, which is left for the caller. */
  function sequence(inBraces: boolean): string {
    let out = ''
    while (i < chars.length) {
      const c = chars[i]!
      if (inBraces && (c === ',' || c === '}')) return out
      if (c === '*') {
        if (chars[i + 1] === '*') {
          out += '[^]*'
          i += 2
        } else {
          out += `[^${SEPARATORS.replace('.', '\\.')}]*`
          i++
        }
      } else if (c === '?') {
        out += `[^${SEPARATORS.replace('.', '\\.')}]`
        i++
      } else if (c === '[') {
        out += classAt()
      } else if (c === '{') {
        i++
        const alternatives: string[] = []
        for (;;) {
          alternatives.push(sequence(true))
          if (i >= chars.length) throw new GlobSyntaxError('a { is never closed by }')
          if (chars[i] === '}') break
          i++ // the ','
        }
        i++
        out += `(?:${alternatives.join('|')})`
      } else if (c === '\\') {
        if (i + 1 >= chars.length) throw new GlobSyntaxError('the pattern ends with a lone \\')
        out += literal(chars[i + 1]!)
        i += 2
      } else {
        out += literal(c)
        i++
      }
    }
    return out
  }

  return `^${sequence(false)}$`
}

const compiled = new Map<string, RegExp | GlobSyntaxError>()

/** The entry's matcher (cached), or the syntax error that makes it match nothing. */
function matcher(glob: string): RegExp | GlobSyntaxError {
  let entry = compiled.get(glob)
  if (entry === undefined) {
    try {
      entry = new RegExp(translate(glob), 'u')
    } catch (error) {
      entry = error instanceof GlobSyntaxError ? error : new GlobSyntaxError((error as Error).message)
    }
    if (compiled.size > 10000) compiled.clear()
    compiled.set(glob, entry)
  }
  return entry
}

/** Whether `address` matches the allow-list glob `glob` in full (GoTrue's glob.Match). */
export function globMatches(glob: string, address: string): boolean {
  const m = matcher(glob)
  return m instanceof RegExp && m.test(address)
}

/** What is wrong with an allow-list glob's syntax, or undefined. */
export function globSyntaxProblem(glob: string): string | undefined {
  const m = matcher(glob)
  return m instanceof GlobSyntaxError ? m.message : undefined
}

/**
 * An address the glob matches (each wildcard and class as `1`, which fits a
 * host label, a port and a path alike; braces as their first alternative), so
 * a pattern can be checked as a URL on save.
 */
export function globExample(glob: string): string {
  const chars = Array.from(glob)
  let out = ''
  const inFirstAlternative: boolean[] = [] // one per open brace
  const emitting = () => inFirstAlternative.every(Boolean)
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!
    if (c === '\\') {
      if (emitting()) out += chars[i + 1] ?? ''
      i++
    } else if (c === '{') inFirstAlternative.push(true)
    else if (c === ',' && inFirstAlternative.length > 0) inFirstAlternative[inFirstAlternative.length - 1] = false
    else if (c === '}' && inFirstAlternative.length > 0) inFirstAlternative.pop()
    else if (c === '[') {
      while (i < chars.length && chars[i] !== ']') i += chars[i] === '\\' ? 2 : 1
      if (emitting()) out += '1'
    } else if (c === '*' || c === '?') {
      if (emitting()) out += '1'
      if (c === '*' && chars[i + 1] === '*') i++
    } else if (emitting()) out += c
  }
  return out
}

const HOSTNAME = /^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?$/
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '0.0.0.0', '[::]'])

/**
 * The address parsed, or undefined when GoTrue would refuse it before any
 * allow-list entry is tried: not a URL; for http(s), a host as written that is
 * not a plain DNS name or IP (Unicode, `_`, a stray dot or dash), or made of
 * digits only (a decimal IP). Unlike GoTrue, a user name or password in the
 * address is refused too: `http://localhost:*` would otherwise match
 * `http://localhost:x@evil/`.
 */
function parseRedirect(address: string): URL | undefined {
  let url: URL
  try {
    url = new URL(address)
  } catch {
    return undefined
  }
  if (url.username !== '' || url.password !== '') return undefined
  if (url.protocol === 'http:' || url.protocol === 'https:') {
    const authority = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/([^/?#\\]*)/.exec(address)?.[1] ?? ''
    if (authority.includes('@')) return undefined
    const host = authority.startsWith('[') ? authority.slice(0, authority.indexOf(']') + 1) : authority.replace(/:[^:]*$/, '')
    if (host.startsWith('[')) return url.hostname === host.toLowerCase() ? url : undefined
    if (!HOSTNAME.test(host) || /^\d+$/.test(host)) return undefined
  }
  return url
}

/** GoTrue's site URL rule: same scheme, host and port; the port is free on loopback hosts. */
function onSiteUrl(siteUrl: string, url: URL): boolean {
  let site: URL
  try {
    site = new URL(siteUrl)
  } catch {
    return false
  }
  if (site.protocol !== url.protocol || site.hostname !== url.hostname) return false
  return site.port === url.port || LOOPBACK.has(url.hostname)
}

export function isAllowedRedirect(settings: AuthSettings, address: string): boolean {
  const url = parseRedirect(address)
  if (url === undefined) return false
  if (onSiteUrl(settings.siteUrl, url)) return true
  const withoutFragment = address.split('#')[0]!
  return settings.additionalRedirectUrls.some((entry) => globMatches(entry, withoutFragment))
}

/** The `redirect_to` of a request, checked; the site URL when none was given. */
export function resolveRedirect(settings: AuthSettings, requested: string | null | undefined): string {
  if (requested === null || requested === undefined || requested === '') return settings.siteUrl
  if (!isAllowedRedirect(settings, requested)) {
    throw authErrors.validation(
      `redirect_to "${requested}" is not allowed: it must be the site URL or on the project's allowed redirect URLs (baseplane auth redirects)`,
    )
  }
  return requested
}
