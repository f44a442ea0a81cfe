// WebAuthn second factors' settings (GoTrue's GOTRUE_MFA_WEB_AUTHN_ENROLL_ENABLED,
// _VERIFY_ENABLED, GOTRUE_WEBAUTHN_RP_ID, _RP_DISPLAY_NAME, _RP_ORIGINS), per
// project. Both switches are off by default, as in GoTrue. The relying party
// is never read from the request (GoTrue >= 2.190 ignores the rpId/rpOrigins
// auth-js sends) nor from the redirect globs: when not set, the id is the site
// URL's host name and the only origin the site URL's origin (DECISIONS.md,
// "Auth for apps, round 3"). The settings themselves (names, flags, labels)
// are declared in settings-table.ts; their checks are here.

export interface WebAuthnSettings {
  enrollEnabled: boolean
  verifyEnabled: boolean
  /** A domain (no scheme, no port): the origins' host or a parent of it (WebAuthn L3 §5.1.3, "RP ID"). */
  rpId: string
  rpDisplayName: string
  /** Exact origins (scheme://host[:port]) the browser's clientDataJSON may name. */
  rpOrigins: string[]
}

export const MAX_RP_ORIGINS = 20

// A host name of dot-separated labels (localhost included); IP addresses are not valid RP ids.
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/

export function rpIdProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || !DOMAIN.test(value) || /^[\d.]+$/.test(value)) {
    return `webauthn_rp_id must be a lower-case domain name without scheme or port, such as app.example.com, got ${JSON.stringify(value)}`
  }
  return undefined
}

/** An origin browsers accept for WebAuthn: https, or http on localhost (as GoTrue 2.181+ checked them). */
export function rpOriginProblem(value: unknown): string | undefined {
  const what = `webauthn_rp_origins: ${JSON.stringify(value)} is not an origin`
  if (typeof value !== 'string') return what
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return `${what} (write scheme://host[:port], such as https://app.example.com)`
  }
  if (url.origin !== value) return `${what} (write scheme://host[:port] with no path or trailing slash, such as ${url.origin})`
  const local = url.hostname === 'localhost' || url.hostname.endsWith('.localhost')
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && local)) return `${what} browsers use for WebAuthn: it must be https (http only on localhost)`
  return undefined
}

/** WebAuthn L3 §5.1.3: the RP id must be the origin's host or a domain it belongs to. */
export function originMatchesRpId(origin: string, rpId: string): boolean {
  const host = new URL(origin).hostname
  return host === rpId || host.endsWith(`.${rpId}`)
}

/** What is wrong with a relying party name (webauthn_rp_display_name), if anything. */
export function rpNameProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '' || value.length > 100) return 'webauthn_rp_display_name must be a name of 1 to 100 characters'
  return undefined
}

/** Every problem of a list of origins (webauthn_rp_origins) on its own. */
export function rpOriginsProblems(origins: unknown): string[] {
  if (!Array.isArray(origins) || origins.length === 0) return ['webauthn_rp_origins must be a non-empty list of origins']
  if (origins.length > MAX_RP_ORIGINS) return [`webauthn_rp_origins holds at most ${MAX_RP_ORIGINS} origins`]
  return origins.map(rpOriginProblem).filter((p): p is string => p !== undefined)
}

/**
 * The origins that are not on the relying party ID, when both are set and
 * valid: a browser refuses a ceremony whose RP id is not the origin's host or
 * a parent of it.
 */
export function originsOffRpIdProblems(stored: Record<string, unknown>): string[] {
  const { webauthn_rp_id: rpId, webauthn_rp_origins: origins } = stored
  if (typeof rpId !== 'string' || rpIdProblem(rpId) !== undefined || origins == null || rpOriginsProblems(origins).length > 0) return []
  return (origins as string[])
    .filter((origin) => !originMatchesRpId(origin, rpId))
    .map((origin) => `webauthn_rp_origins: ${origin} is not on ${rpId} (the webauthn_rp_id) or a subdomain of it`)
}

/** The effective settings: stored values that fail validation fall back to the defaults. */
export function webauthnSettings(stored: Record<string, unknown>, siteUrl: string): WebAuthnSettings {
  const site = new URL(siteUrl)
  const rpId = typeof stored.webauthn_rp_id === 'string' && rpIdProblem(stored.webauthn_rp_id) === undefined ? stored.webauthn_rp_id : site.hostname
  const origins = stored.webauthn_rp_origins
  const rpOrigins =
    Array.isArray(origins) && origins.length > 0 && origins.every((o) => rpOriginProblem(o) === undefined) ? [...new Set(origins as string[])] : [site.origin]
  const name = stored.webauthn_rp_display_name
  return Object.freeze({
    enrollEnabled: stored.mfa_web_authn_enroll_enabled === true,
    verifyEnabled: stored.mfa_web_authn_verify_enabled === true,
    rpId,
    rpDisplayName: typeof name === 'string' && name.trim() !== '' ? name : rpId,
    rpOrigins: Object.freeze(rpOrigins) as string[],
  })
}
