// A project's auth hooks as its settings name them (GoTrue's
// GOTRUE_HOOK_<NAME>_{URI,SECRETS}, shared/reference/gotrue-round3.md §4),
// stored with the Supabase management API's names. A hook is on when its URI
// is set (GoTrue's separate ENABLED switch is not kept: clearing the URI turns
// it off). The custom access token hook is a database function; the send
// email hook a database function or an HTTPS endpoint signed with Standard
// Webhooks, whose secrets are write-only. The settings themselves (names,
// flags, labels) are declared in ../settings-table.ts; their checks are here.

/** `pg-functions://postgres/<schema>/<function>`: run in the project database. */
export interface PgHook {
  kind: 'pg'
  uri: string
  schema: string
  fn: string
}

/** An HTTPS endpoint (http only for localhost), signed with each of `secrets`. */
export interface HttpHook {
  kind: 'http'
  uri: string
  secrets: readonly Buffer[]
}

export interface HookSettings {
  customAccessToken: PgHook | undefined
  sendEmail: PgHook | HttpHook | undefined
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/
const SECRET = /^v1,whsec_([A-Za-z0-9+/]+={0,2})$/

function pgHook(uri: string): PgHook | string {
  const match = /^pg-functions:\/\/postgres\/([^/]+)\/([^/]+)$/.exec(uri)
  if (!match) return `must look like pg-functions://postgres/<schema>/<function>, got "${uri}"`
  const [, schema, fn] = match as unknown as [string, string, string]
  if (!IDENTIFIER.test(schema) || !IDENTIFIER.test(fn)) return `names a schema and function that are not plain identifiers (letters, digits, _ and $, at most 63): "${uri}"`
  return { kind: 'pg', uri, schema, fn }
}

function httpProblem(uri: string): string | undefined {
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return `must be pg-functions://postgres/<schema>/<function> or an https:// URL, got "${uri}"`
  }
  if (url.protocol === 'https:') return undefined
  if (url.protocol === 'http:' && (url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]')) return undefined
  if (url.protocol === 'http:') return `may use http:// only for localhost or 127.0.0.1; use https://, got "${uri}"`
  return `must be pg-functions://postgres/<schema>/<function> or an https:// URL, got "${uri}"`
}

/** The secrets of a `|`-separated list, or what is wrong with it. */
function secretsOf(value: string): Buffer[] | string {
  const secrets: Buffer[] = []
  for (const part of value.split('|')) {
    const match = SECRET.exec(part.trim())
    const bytes = match ? Buffer.from(match[1]!, 'base64') : undefined
    if (bytes === undefined || bytes.length < 16) return 'hook_send_email_secrets must be Standard Webhooks secrets "v1,whsec_<base64 of at least 16 bytes>", separated by |'
    secrets.push(bytes)
  }
  return secrets
}

/** A hook setting that is not set: absent, null or "" (that is how a hook is turned off). */
export const unset = (value: unknown) => value === undefined || value === null || value === ''

/** What is wrong with a custom access token hook's URI (a database function only), if anything. */
export function accessTokenHookProblem(value: unknown): string | undefined {
  if (unset(value)) return undefined
  if (typeof value !== 'string') return 'hook_custom_access_token_uri must be a string'
  const hook = pgHook(value)
  return typeof hook === 'string' ? `hook_custom_access_token_uri ${hook}` : undefined
}

/** What is wrong with a send email hook's URI (a database function or an HTTPS endpoint), if anything. */
export function sendEmailHookProblem(value: unknown): string | undefined {
  if (unset(value)) return undefined
  if (typeof value !== 'string') return 'hook_send_email_uri must be a string'
  if (value.startsWith('pg-functions:')) {
    const hook = pgHook(value)
    return typeof hook === 'string' ? `hook_send_email_uri ${hook}` : undefined
  }
  const problem = httpProblem(value)
  return problem ? `hook_send_email_uri ${problem}` : undefined
}

/** What is wrong with the send email hook's signing secrets, if anything. */
export function hookSecretsProblem(value: unknown): string | undefined {
  if (unset(value)) return undefined
  if (typeof value !== 'string') return 'hook_send_email_secrets must be a string'
  const parsed = secretsOf(value)
  return typeof parsed === 'string' ? parsed : undefined
}

/** An HTTP send email hook signs each call, so it needs its secrets: the problem when they are missing. */
export function sendEmailHookSecretsMissing(stored: Record<string, unknown>): string | undefined {
  const email = stored.hook_send_email_uri
  if (typeof email !== 'string' || unset(email) || email.startsWith('pg-functions:') || httpProblem(email) !== undefined) return undefined
  if (!unset(stored.hook_send_email_secrets)) return undefined
  return 'hook_send_email_uri is an HTTP endpoint: set hook_send_email_secrets too ("v1,whsec_<base64>"), with which each call is signed'
}

/** The hooks in effect; a stored value that fails validation (never saved so) leaves its hook off. */
export function hookSettingsOf(stored: Record<string, unknown>): HookSettings {
  const token = typeof stored.hook_custom_access_token_uri === 'string' && stored.hook_custom_access_token_uri !== '' ? pgHook(stored.hook_custom_access_token_uri) : undefined
  const email = typeof stored.hook_send_email_uri === 'string' ? stored.hook_send_email_uri : ''
  let sendEmail: PgHook | HttpHook | undefined
  if (email.startsWith('pg-functions:')) {
    const hook = pgHook(email)
    sendEmail = typeof hook === 'string' ? undefined : hook
  } else if (email !== '' && httpProblem(email) === undefined) {
    const secrets = typeof stored.hook_send_email_secrets === 'string' ? secretsOf(stored.hook_send_email_secrets) : 'none'
    sendEmail = typeof secrets === 'string' ? undefined : { kind: 'http', uri: email, secrets }
  }
  return Object.freeze({ customAccessToken: typeof token === 'object' ? token : undefined, sendEmail })
}

/** What the CLI and admin API show: the URIs, and how many secrets are set (never the secrets). */
export function hooksView(stored: Record<string, unknown>) {
  const hooks = hookSettingsOf(stored)
  return {
    hook_custom_access_token_uri: hooks.customAccessToken?.uri ?? null,
    hook_send_email_uri: hooks.sendEmail?.uri ?? null,
    hook_send_email_secrets_set: hooks.sendEmail?.kind === 'http' ? hooks.sendEmail.secrets.length : typeof stored.hook_send_email_secrets === 'string' && stored.hook_send_email_secrets !== '' ? stored.hook_send_email_secrets.split('|').length : 0,
  }
}
