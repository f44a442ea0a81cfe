// Redirect addresses (SPEC 1, "Redirect addresses"): a redirect is allowed
// when it is on the site URL's origin or matches an allow-list entry. Entries
// use GoTrue's glob syntax, matched against the whole URL without its
// fragment: `*` is any run of characters except `.` and `/`, `**` crosses
// them, `?` is one such character. Anything else is refused (GoTrue falls
// back to the site URL silently; the spec asks for a refusal).
import { authErrors } from './errors.ts'
import type { AuthSettings } from './settings.ts'

const compiled = new Map<string, RegExp>()

function globToRegExp(glob: string): RegExp {
  let re = compiled.get(glob)
  if (re === undefined) {
    let source = ''
    for (let i = 0; i < glob.length; i++) {
      const c = glob[i]!
      if (c === '*' && glob[i + 1] === '*') {
        source += '.*'
        i++
      } else if (c === '*') source += '[^./]*'
      else if (c === '?') source += '[^./]'
      else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&')
    }
    re = new RegExp(`^${source}$`)
    if (compiled.size > 10000) compiled.clear()
    compiled.set(glob, re)
  }
  return re
}

function origin(url: string): string | undefined {
  try {
    const parsed = new URL(url)
    return parsed.origin === 'null' ? undefined : parsed.origin
  } catch {
    return undefined
  }
}

export function isAllowedRedirect(settings: AuthSettings, url: string): boolean {
  const withoutFragment = url.split('#')[0]!
  const site = origin(settings.siteUrl)
  const own = origin(url)
  if (site !== undefined && own === site) return true
  return settings.additionalRedirectUrls.some((entry) => entry === withoutFragment || globToRegExp(entry).test(withoutFragment))
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
