// Every Auth setting `PATCH /platform/v1/projects/{ref}/auth` takes, declared
// once, as GoTrue declares each configuration value once in its config struct
// (supabase/auth internal/conf/configuration.go: field, env key, default,
// validation) and as workers/graphql/filter-operators.ts declares each filter
// operator: its stored name (also its name in the admin API's JSON), type,
// bounds or check, default, the dashboard's label, what a saved change is
// called, the CLI's flag, placeholder and help, and where GoTrue's
// GET /settings shows it. settings.ts checks and applies defaults from it; the
// control plane's checks, `baseplane auth settings` (flags, parsing, help,
// usage) and the dashboard's Auth forms are made from it, so a setting is one
// entry here. The site URL, the allow list, the templates and Google sign-in
// have commands and forms of their own (auth redirects, template, google).
import { accessTokenHookProblem, hookSecretsProblem, sendEmailHookProblem } from './hooks/settings.ts'
import { rpIdProblem, rpNameProblem, rpOriginsProblems } from './webauthn-settings.ts'

/** The dashboard form a setting is drawn in (the Auth tab's Settings, WebAuthn and Hooks sections). */
export type OptionGroup = 'settings' | 'webauthn' | 'hooks'

/** A flag that takes a value: `--flag PLACEHOLDER`, described by `help`. */
export interface ValueFlag {
  flag: string
  placeholder: string
  help: string
}

/** A switch set by two bare flags (`--disable-signup`, `--enable-signup`). */
export interface FlagPair {
  on: string
  off: string
  help: { on: string; off: string }
}

interface Declared {
  /** The stored key (`baseplane.projects.auth_settings`) and the admin API's name. */
  name: string
  group: OptionGroup
  /** The dashboard's label of its input. */
  label: string
}

/** A whole number within bounds; `field` names it in the effective settings (AuthSettings). */
export interface IntegerOption extends Declared {
  type: 'integer'
  field: string
  min: number
  max: number
  default: number
  /** What a saved change is called (the CLI's confirmation line, the dashboard's notice). */
  noun: string
  cli: ValueFlag
}

/** true or false. `on` and `off` say what a change to each did; `field` as above, where the switch is one of AuthSettings' own. */
export interface SwitchOption extends Declared {
  type: 'switch'
  field?: string
  default: boolean
  on: string
  off: string
  cli: ValueFlag | FlagPair
  /** Where GoTrue's GET /settings shows it (at the top, or in `external`). */
  public?: { key: string; external?: boolean }
}

/** A text whose absence (null) means a default derived from other settings, `defaultIs`. */
export interface TextOption extends Declared {
  type: 'text'
  noun: string
  defaultIs: string
  cli: ValueFlag
  problem(value: unknown): string | undefined
}

/** A list of texts (comma-separated on the command line, a line each in the dashboard); null: `defaultIs`. */
export interface ListOption extends Declared {
  type: 'list'
  noun: string
  defaultIs: string
  cli: ValueFlag
  problems(value: unknown): string[]
}

/** A hook's URI: on while set, "" or null removes it. */
export interface HookOption extends Declared {
  type: 'hook'
  noun: string
  cli: ValueFlag
  problem(value: unknown): string | undefined
}

/** A write-only secret: never shown, only how many are set (`countShownAs` in the view); "" or null removes it. */
export interface SecretOption extends Declared {
  type: 'secret'
  noun: string
  countShownAs: string
  cli: ValueFlag
  problem(value: unknown): string | undefined
}

export type AuthOption = IntegerOption | SwitchOption | TextOption | ListOption | HookOption | SecretOption

const SWITCH = 'true|false'

/** The table, in the order the CLI's usage and the dashboard's forms list them. */
export const AUTH_OPTIONS = [
  {
    name: 'mail_per_hour', type: 'integer', field: 'mailPerHour', group: 'settings', min: 0, max: 1000000, default: 30, // SPEC 8.3
    label: 'Mails per hour (all addresses together)', noun: 'mails per hour',
    cli: { flag: 'mail-per-hour', placeholder: 'N', help: 'auth mails the project may send per hour' },
  },
  {
    // GoTrue's SMTP_MAX_FREQUENCY: the least time between two mails of one kind to one user.
    name: 'mail_min_interval_seconds', type: 'integer', field: 'mailMinIntervalSeconds', group: 'settings', min: 0, max: 86400, default: 60,
    label: 'Seconds between two mails to one address', noun: 'interval between mails',
    cli: { flag: 'mail-min-interval', placeholder: 'SECONDS', help: 'seconds before the same address gets another mail' },
  },
  {
    name: 'otp_expiry_seconds', type: 'integer', field: 'otpExpirySeconds', group: 'settings', min: 60, max: 86400, default: 3600,
    label: 'Email links and codes expire after (seconds)', noun: 'link and code expiry',
    cli: { flag: 'otp-expiry', placeholder: 'SECONDS', help: 'seconds an emailed link or code stays valid' },
  },
  {
    name: 'jwt_expiry_seconds', type: 'integer', field: 'jwtExpirySeconds', group: 'settings', min: 30, max: 604800, default: 3600,
    label: 'Access tokens expire after (seconds)', noun: 'access token expiry',
    cli: { flag: 'jwt-expiry', placeholder: 'SECONDS', help: 'seconds an access token lives' },
  },
  {
    // GoTrue's SECURITY_REFRESH_TOKEN_REUSE_INTERVAL.
    name: 'refresh_token_reuse_interval_seconds', type: 'integer', field: 'refreshTokenReuseIntervalSeconds', group: 'settings', min: 0, max: 3600, default: 10,
    label: 'Refresh token reuse interval (seconds)', noun: 'refresh token reuse interval',
    cli: {
      flag: 'refresh-reuse-interval',
      placeholder: 'SECONDS',
      help: 'seconds after a refresh during which older refresh tokens of the session get its current one; the last used token always does',
    },
  },
  {
    name: 'password_min_length', type: 'integer', field: 'passwordMinLength', group: 'settings', min: 6, max: 72, default: 6,
    label: 'Shortest password', noun: 'shortest password',
    cli: { flag: 'password-min-length', placeholder: 'N', help: 'shortest password accepted' },
  },
  {
    name: 'disable_signup', type: 'switch', field: 'disableSignup', group: 'settings', default: false, public: { key: 'disable_signup' },
    label: 'Sign-ups are closed (only invited or created users)', on: 'sign-ups closed', off: 'sign-ups open',
    cli: { on: 'disable-signup', off: 'enable-signup', help: { on: 'refuse new sign-ups (existing users still sign in)', off: 'accept new sign-ups again' } },
  },
  {
    name: 'mailer_autoconfirm', type: 'switch', field: 'mailerAutoconfirm', group: 'settings', default: false, public: { key: 'mailer_autoconfirm' },
    label: 'Confirm new addresses without a mail', on: 'addresses confirmed without a mail', off: 'addresses confirmed by mail',
    cli: {
      flag: 'autoconfirm',
      placeholder: SWITCH,
      help: 'true: a new address is confirmed at sign-up, with no mail (mailer_autoconfirm); false: a mailed link confirms it',
    },
  },
  {
    // GoTrue's MAILER_SECURE_EMAIL_CHANGE_ENABLED (on by default).
    name: 'mailer_secure_email_change_enabled', type: 'switch', field: 'secureEmailChange', group: 'settings', default: true,
    label: 'An email change is confirmed by both addresses', on: 'email changes confirmed by both addresses', off: 'email changes confirmed by the new address',
    cli: { flag: 'secure-email-change', placeholder: SWITCH, help: 'true: an address change is confirmed by the current address too' },
  },
  {
    // GoTrue's SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: the GET /reauthenticate code.
    name: 'security_update_password_require_reauthentication', type: 'switch', field: 'passwordChangeRequiresReauthentication', group: 'settings', default: false,
    label: 'A password change needs a code sent by mail (sessions older than 24 hours)', on: 'password changes need a code', off: 'password changes need no code',
    cli: { flag: 'secure-password-change', placeholder: SWITCH, help: 'true: a password change from a session older than 24 h needs a reauthentication code' },
  },
  {
    // GoTrue's EXTERNAL_ANONYMOUS_USERS_ENABLED: POST /signup with neither email nor phone.
    name: 'external_anonymous_users_enabled', type: 'switch', field: 'anonymousUsersEnabled', group: 'settings', default: false,
    public: { key: 'anonymous_users', external: true },
    label: 'Anonymous sign-ins (signInAnonymously)', on: 'anonymous sign-ins on', off: 'anonymous sign-ins off',
    cli: { flag: 'anonymous-users', placeholder: SWITCH, help: 'true: signInAnonymously() signs in a user with no address, shown as is_anonymous' },
  },
  {
    // GoTrue's RATE_LIMIT_ANONYMOUS_USERS.
    name: 'rate_limit_anonymous_users', type: 'integer', field: 'anonymousUsersPerHour', group: 'settings', min: 1, max: 1000000, default: 30,
    label: 'Anonymous sign-ins per address per hour', noun: 'anonymous sign-ins per hour',
    cli: { flag: 'anonymous-per-hour', placeholder: 'N', help: 'anonymous sign-ins one address may make per hour' },
  },
  {
    // GoTrue's SECURITY_MANUAL_LINKING_ENABLED: /user/identities/*.
    name: 'security_manual_linking_enabled', type: 'switch', field: 'manualLinkingEnabled', group: 'settings', default: false,
    label: 'Users link and unlink identities (linkIdentity, unlinkIdentity)', on: 'manual linking on', off: 'manual linking off',
    cli: { flag: 'manual-linking', placeholder: SWITCH, help: 'true: signed-in users may link and unlink identities with linkIdentity() and unlinkIdentity()' },
  },
  {
    // GoTrue's MFA_WEB_AUTHN_ENROLL_ENABLED; the effective value is webauthn-settings.ts' enrollEnabled.
    name: 'mfa_web_authn_enroll_enabled', type: 'switch', group: 'webauthn', default: false,
    label: 'Users may enrol WebAuthn second factors (security keys, platform authenticators)', on: 'WebAuthn enrolment on', off: 'WebAuthn enrolment off',
    cli: { flag: 'webauthn-enroll', placeholder: SWITCH, help: 'true: users may enrol WebAuthn second factors (security keys, platform authenticators)' },
  },
  {
    name: 'mfa_web_authn_verify_enabled', type: 'switch', group: 'webauthn', default: false,
    label: 'WebAuthn factors may be challenged and verified (aal2)', on: 'WebAuthn verification on', off: 'WebAuthn verification off',
    cli: { flag: 'webauthn-verify', placeholder: SWITCH, help: 'true: WebAuthn factors may be challenged and verified, giving aal2' },
  },
  {
    name: 'webauthn_rp_id', type: 'text', group: 'webauthn', problem: rpIdProblem, defaultIs: "the site URL's host",
    label: 'Relying party ID (a domain such as app.example.com)', noun: 'relying party ID',
    cli: { flag: 'webauthn-rp-id', placeholder: 'DOMAIN|default', help: 'the WebAuthn relying party ID, a domain such as app.example.com' },
  },
  {
    name: 'webauthn_rp_display_name', type: 'text', group: 'webauthn', problem: rpNameProblem, defaultIs: 'the relying party ID',
    label: 'Relying party name (authenticators show it)', noun: 'relying party name',
    cli: { flag: 'webauthn-rp-name', placeholder: 'NAME|default', help: 'the relying party name authenticators show' },
  },
  {
    name: 'webauthn_rp_origins', type: 'list', group: 'webauthn', problems: rpOriginsProblems, defaultIs: "the site URL's origin",
    label: "Origins the app's pages run on (one per line, such as https://app.example.com)", noun: 'WebAuthn origins',
    cli: { flag: 'webauthn-rp-origins', placeholder: 'ORIGIN,...|default', help: "comma-separated origins the app's pages run on, such as https://app.example.com" },
  },
  {
    name: 'hook_custom_access_token_uri', type: 'hook', group: 'hooks', problem: accessTokenHookProblem,
    label: 'Custom access token hook (pg-functions://postgres/SCHEMA/FUNCTION, run at every token issue)', noun: 'access token hook',
    cli: { flag: 'access-token-hook', placeholder: 'URI', help: 'custom access token hook: pg-functions://postgres/SCHEMA/FUNCTION, run at every token issue; "" removes it' },
  },
  {
    name: 'hook_send_email_uri', type: 'hook', group: 'hooks', problem: sendEmailHookProblem,
    label: 'Send email hook (pg-functions://postgres/SCHEMA/FUNCTION or an https:// URL; all auth mail then goes only to it)', noun: 'send email hook',
    cli: {
      flag: 'send-email-hook',
      placeholder: 'URI',
      help: 'send email hook: pg-functions://postgres/SCHEMA/FUNCTION or an https:// URL; all auth mail then goes only to it; "" removes it',
    },
  },
  {
    name: 'hook_send_email_secrets', type: 'secret', group: 'hooks', problem: hookSecretsProblem, countShownAs: 'hook_send_email_secrets_set',
    label: 'Signing secrets of an https send email hook ("v1,whsec_<base64>", | between several)', noun: 'send email hook secrets',
    cli: {
      flag: 'send-email-hook-secret',
      placeholder: 'SECRET|-',
      help: 'Standard Webhooks signing secret(s) of an https send email hook, "v1,whsec_<base64>" (| between several); - reads it from standard input; "" removes them',
    },
  },
] as const satisfies readonly AuthOption[]

type Declaration = (typeof AUTH_OPTIONS)[number]
type Fielded = Extract<Declaration, { field: string }>

/** The effective settings the table declares a field for (AuthSettings' numbers and switches). */
export type OptionFields = { [O in Fielded as O['field']]: O extends { type: 'integer' } ? number : boolean }

/** Those settings as GET /projects/{ref}/auth shows them, by stored name. */
export type OptionFieldsView = { [O in Fielded as O['name']]: O extends { type: 'integer' } ? number : boolean }

/** A stored value of each type (null: cleared, as a change sends it; it is then removed). */
interface StoredValues {
  integer: number
  switch: boolean
  text: string | null
  list: string[] | null
  hook: string | null
  secret: string | null
}

/** The table's settings as the catalogue stores them. */
export type StoredOptions = { [O in Declaration as O['name']]?: StoredValues[O['type']] }

/** Every stored name the table declares. */
export type OptionName = Declaration['name']

const BY_NAME: ReadonlyMap<string, AuthOption> = new Map(AUTH_OPTIONS.map((option) => [option.name, option]))

/** The declaration of `name`, if the table has one. */
export function authOption(name: string): AuthOption | undefined {
  return BY_NAME.get(name)
}

/** Types whose null (and, for hooks and secrets, "") means "not set": the key is then removed, not stored. */
const CLEARABLE: ReadonlySet<AuthOption['type']> = new Set(['text', 'list', 'hook', 'secret'])

export function isCleared(option: AuthOption, value: unknown): boolean {
  if (!CLEARABLE.has(option.type)) return false
  return value === null || ((option.type === 'hook' || option.type === 'secret') && value === '')
}

/** Every problem of one stored value of `option` (none for an absent or cleared one). */
export function optionProblems(option: AuthOption, value: unknown): string[] {
  if (value === undefined || isCleared(option, value)) return []
  switch (option.type) {
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value) && value >= option.min && value <= option.max
        ? []
        : [`${option.name} must be a whole number from ${option.min} to ${option.max}`]
    case 'switch':
      return typeof value === 'boolean' ? [] : [`${option.name} must be true or false`]
    case 'list':
      return option.problems(value)
    default: {
      const problem = option.problem(value)
      return problem === undefined ? [] : [problem]
    }
  }
}

/** `settings` without the keys a change cleared (null, or "" for hooks and secrets): they go back to their defaults. */
export function withoutCleared<T extends object>(settings: T): T {
  const out = { ...settings } as Record<string, unknown>
  for (const option of AUTH_OPTIONS) if (isCleared(option, out[option.name])) delete out[option.name]
  return out as T
}
