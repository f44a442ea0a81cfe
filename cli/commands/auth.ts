// `baseplane auth ...`: redirect addresses, email templates, Google sign-in
// and other auth settings of a project (control-plane/auth-settings.ts).
import fs from 'node:fs'
import {
  getAuthSettings,
  KINDS,
  listTemplates,
  resetTemplate,
  setAuthOptions,
  setGoogle,
  setRedirects,
  setTemplate,
} from '../../control-plane/auth-settings.ts'
import { baseUrlOf } from '../../lib/catalogue.ts'
import { NUMERIC_SETTINGS } from '../../workers/auth/face.ts'
import { integerOption, refusedValue, stringOption, table, UsageError, type Command } from '../command.ts'
import { getProject } from '../../control-plane/projects.ts'

type SettingsView = Awaited<ReturnType<typeof getAuthSettings>> & { auth_enabled: boolean }

/** Google sign-in needs the Auth product too: a fully configured provider is offered only once Auth is on. */
const googleState = (ref: string, google: { offered: boolean; missing: string[] }, authEnabled: boolean) =>
  !google.offered
    ? `not offered (missing: ${google.missing.join(', ')})`
    : authEnabled
      ? 'offered'
      : `configured, but Auth is off for ${ref}: turn it on with baseplane products enable auth ${ref}`

const onOff = (on: boolean) => (on ? 'on' : 'off')

/**
 * Every setting `GET /platform/v1/projects/{ref}/auth` answers, a line each
 * (one for related ones), in the order an operator looks for them. The test
 * (test/cli/auth-settings.test.ts) holds that no field of the view is left out.
 */
const settingLines = (s: SettingsView) => [
  `site URL              ${s.site_url}`,
  `allowed redirects     ${s.additional_redirect_urls.length ? s.additional_redirect_urls.join(', ') : '(none)'}`,
  `sign-ups              ${s.disable_signup ? 'closed (only invited or created users)' : 'open'}`,
  `autoconfirm           ${s.mailer_autoconfirm ? 'on: new addresses are confirmed without a mail' : 'off: new addresses are confirmed by a mailed link'}`,
  `mail per hour         ${s.mail_per_hour}`,
  `mail interval         ${s.mail_min_interval_seconds} s between two mails to one address`,
  `link and code expiry  ${s.otp_expiry_seconds} s`,
  `access token expiry   ${s.jwt_expiry_seconds} s`,
  `refresh reuse         ${s.refresh_token_reuse_interval_seconds} s`,
  `shortest password     ${s.password_min_length}`,
  `custom templates      ${s.custom_templates.length ? s.custom_templates.join(', ') : '(none)'}`,
  `google                ${googleState(s.ref, s.google, s.auth_enabled)}`,
  `email change          ${s.mailer_secure_email_change_enabled ? 'confirmed by the current and the new address' : 'confirmed by the new address'}`,
  `password change       ${s.security_update_password_require_reauthentication ? 'needs the reauthentication code from sessions older than 24 h' : 'no reauthentication'}`,
  `anonymous sign-ins    ${s.external_anonymous_users_enabled ? `on (at most ${s.rate_limit_anonymous_users} per address per hour)` : `off (at most ${s.rate_limit_anonymous_users} per address per hour when on)`}`,
  `access token hook     ${s.hook_custom_access_token_uri ?? '(none)'}`,
  `send email hook       ${s.hook_send_email_uri ? `${s.hook_send_email_uri}${s.hook_send_email_secrets_set ? ` (${s.hook_send_email_secrets_set} signing secret${s.hook_send_email_secrets_set > 1 ? 's' : ''})` : ''}` : '(none: Auth sends the mail)'}`,
  `webauthn factors      enrol ${onOff(s.mfa_web_authn_enroll_enabled)}, verify ${onOff(s.mfa_web_authn_verify_enabled)}; relying party ${s.webauthn_rp_id} ("${s.webauthn_rp_display_name}"), origins ${s.webauthn_rp_origins.join(', ')}`,
  `manual linking        ${s.security_manual_linking_enabled ? 'on (linkIdentity, unlinkIdentity)' : 'off'}`,
]

/** What a saved change is called in the confirmation line. */
const CHANGE_WORDS: Record<string, string> = {
  mail_per_hour: 'mail per hour',
  mail_min_interval_seconds: 'mail interval',
  otp_expiry_seconds: 'link and code expiry',
  jwt_expiry_seconds: 'access token expiry',
  refresh_token_reuse_interval_seconds: 'refresh reuse',
  password_min_length: 'shortest password',
  rate_limit_anonymous_users: 'anonymous sign-ins per hour',
  disable_signup: 'sign-ups',
  mailer_autoconfirm: 'autoconfirm',
  mailer_secure_email_change_enabled: 'email change',
  security_update_password_require_reauthentication: 'password change',
  external_anonymous_users_enabled: 'anonymous sign-ins',
  mfa_web_authn_enroll_enabled: 'webauthn enrol',
  mfa_web_authn_verify_enabled: 'webauthn verify',
  security_manual_linking_enabled: 'manual linking',
  webauthn_rp_id: 'webauthn relying party',
  webauthn_rp_display_name: 'webauthn relying party name',
  webauthn_rp_origins: 'webauthn origins',
  hook_custom_access_token_uri: 'access token hook',
  hook_send_email_uri: 'send email hook',
  hook_send_email_secrets: 'send email hook secrets',
}

/** The settings; after a change, first a line saying what was saved (the settings as they now are follow). */
const showSettings = (s: SettingsView & { changed?: string[] }) =>
  [
    ...(s.changed
      ? [
          s.changed.length === 0
            ? `Saved the auth settings of ${s.ref}; nothing changed. They are now:`
            : `Saved the auth settings of ${s.ref} (${s.changed.map((name) => CHANGE_WORDS[name] ?? name).join(', ')}); it applies from the next request. They are now:`,
        ]
      : []),
    ...settingLines(s),
  ].join('\n')

const OPTION_NAMES: Record<string, string> = {
  'mail-per-hour': 'mail_per_hour',
  'mail-min-interval': 'mail_min_interval_seconds',
  'otp-expiry': 'otp_expiry_seconds',
  'jwt-expiry': 'jwt_expiry_seconds',
  'refresh-reuse-interval': 'refresh_token_reuse_interval_seconds',
  'password-min-length': 'password_min_length',
  'anonymous-per-hour': 'rate_limit_anonymous_users',
}

/** Switches set with true or false (GoTrue's MAILER_SECURE_EMAIL_CHANGE_ENABLED, SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION, EXTERNAL_ANONYMOUS_USERS_ENABLED). */
const SWITCH_NAMES: Record<string, string> = {
  'secure-email-change': 'mailer_secure_email_change_enabled',
  'secure-password-change': 'security_update_password_require_reauthentication',
  'anonymous-users': 'external_anonymous_users_enabled',
  'webauthn-enroll': 'mfa_web_authn_enroll_enabled',
  'webauthn-verify': 'mfa_web_authn_verify_enabled',
  'manual-linking': 'security_manual_linking_enabled',
}

/** WebAuthn's relying party (GoTrue's WEBAUTHN_RP_*); the word `default` goes back to the default from the site URL. Origins are comma-separated. */
const WEBAUTHN_TEXT: Record<string, string> = {
  'webauthn-rp-id': 'webauthn_rp_id',
  'webauthn-rp-name': 'webauthn_rp_display_name',
  'webauthn-rp-origins': 'webauthn_rp_origins',
}

/** Auth hooks (workers/auth/hooks/settings.ts): a URI, "" to remove it; the secret is write-only. */
const HOOK_FLAGS: Record<string, string> = {
  'access-token-hook': 'hook_custom_access_token_uri',
  'send-email-hook': 'hook_send_email_uri',
  'send-email-hook-secret': 'hook_send_email_secrets',
}

/** The platform's names for what these commands set, and the flags that set them. */
const FIELD_FLAGS: Record<string, string> = {
  ...Object.fromEntries(Object.entries(OPTION_NAMES).map(([flag, field]) => [field, `--${flag}`])),
  disable_signup: '--disable-signup/--enable-signup',
  mailer_autoconfirm: '--autoconfirm',
  site_url: '--site-url',
  additional_redirect_urls: '--add/--remove/--allow',
  'google.client_id': '--client-id',
  'google.client_secret': 'the client secret (--stdin)',
  'google.enabled': '--enable/--disable',
  'google.additional_client_ids': '--additional-client-ids',
  ...Object.fromEntries(Object.entries(HOOK_FLAGS).map(([flag, field]) => [field, `--${flag}`])),
  ...Object.fromEntries(Object.entries(SWITCH_NAMES).map(([flag, field]) => [field, `--${flag}`])),
  ...Object.fromEntries(Object.entries(WEBAUTHN_TEXT).map(([flag, field]) => [field, `--${flag}`])),
}

export const authCommands: Command[] = [
  {
    words: ['auth', 'settings'],
    positionals: ['REF'],
    usage: 'auth settings REF [--mail-per-hour N] [--otp-expiry S] [--disable-signup|--enable-signup] [--autoconfirm on|off] [--secure-email-change true|false] [--secure-password-change true|false] [--anonymous-users true|false] [--anonymous-per-hour N] [--webauthn-enroll true|false] [--webauthn-verify true|false] [--webauthn-rp-id DOMAIN] [--webauthn-rp-name NAME] [--webauthn-rp-origins ORIGIN,...] [--manual-linking true|false] [--access-token-hook URI] [--send-email-hook URI] [--send-email-hook-secret SECRET|-]',
    summary: "Show (or change) a project's auth settings",
    options: {
      ...Object.fromEntries(Object.keys(OPTION_NAMES).map((name) => [name, { type: 'string' as const }])),
      'disable-signup': { type: 'boolean' },
      'enable-signup': { type: 'boolean' },
      autoconfirm: { type: 'string' },
      ...Object.fromEntries(Object.keys(SWITCH_NAMES).map((name) => [name, { type: 'string' as const }])),
      ...Object.fromEntries(Object.keys(HOOK_FLAGS).map((name) => [name, { type: 'string' as const }])),
      ...Object.fromEntries(Object.keys(WEBAUTHN_TEXT).map((name) => [name, { type: 'string' as const }])),
    },
    optionHelp: {
      'mail-per-hour': 'auth mails the project may send per hour (0 to 1000000; default 30)',
      'mail-min-interval': 'seconds before the same address gets another mail (0 to 86400; default 60)',
      'otp-expiry': 'seconds an emailed link or code stays valid (60 to 86400; default 3600)',
      'jwt-expiry': 'seconds an access token lives (30 to 604800; default 3600)',
      'refresh-reuse-interval': 'seconds after a refresh during which older refresh tokens of the session get its current one; the last used token always does (0 to 3600; default 10)',
      'password-min-length': 'shortest password accepted (6 to 72; default 6)',
      'disable-signup': 'refuse new sign-ups (existing users still sign in)',
      'enable-signup': 'accept new sign-ups again',
      autoconfirm: 'on: a new address is confirmed at sign-up, with no mail (mailer_autoconfirm); off: a mailed link confirms it (default off)',
      'secure-email-change': 'true: an address change is confirmed by the current address too (default true)',
      'secure-password-change': 'true: a password change from a session older than 24 h needs a reauthentication code (default false)',
      'anonymous-users': 'true: signInAnonymously() signs in a user with no address, shown as is_anonymous (default false)',
      'anonymous-per-hour': 'anonymous sign-ins one address may make per hour (1 to 1000000; default 30)',
      'access-token-hook': 'custom access token hook: pg-functions://postgres/SCHEMA/FUNCTION, run at every token issue; "" removes it',
      'send-email-hook': 'send email hook: pg-functions://postgres/SCHEMA/FUNCTION or an https:// URL; all auth mail then goes only to it; "" removes it',
      'send-email-hook-secret': 'Standard Webhooks signing secret(s) of an https send email hook, "v1,whsec_<base64>" (| between several); - reads it from standard input',
      'webauthn-enroll': 'true: users may enrol WebAuthn second factors (security keys, platform authenticators) (default false)',
      'webauthn-verify': 'true: WebAuthn factors may be challenged and verified, giving aal2 (default false)',
      'webauthn-rp-id': 'the WebAuthn relying party ID, a domain such as app.example.com (default, or the word default: the site URL\'s host)',
      'webauthn-rp-name': 'the relying party name authenticators show (default, or the word default: the relying party ID)',
      'webauthn-rp-origins': 'comma-separated origins the app\'s pages run on, such as https://app.example.com (default, or the word default: the site URL\'s origin)',
      'manual-linking': 'true: signed-in users may link and unlink identities (linkIdentity, unlinkIdentity; default false)',
    },
    optionValues: { autoconfirm: 'on|off' },
    notes: 'Without options it shows every setting; after a change it says what was saved, then shows them all. Changes apply from the next request.',
    fieldFlags: FIELD_FLAGS,
    async run(context, args) {
      const ref = args.positionals[0]!
      const patch: Record<string, unknown> = {}
      for (const [flag, key] of Object.entries(OPTION_NAMES)) {
        // A setting without bounds here is still checked by the platform (its message names the flag).
        const value = integerOption(args, flag, NUMERIC_SETTINGS[key] ?? { min: 0, max: Number.MAX_SAFE_INTEGER })
        if (value !== undefined) patch[key] = value
      }
      if (args.values['disable-signup'] === true && args.values['enable-signup'] === true) throw new UsageError('--disable-signup and --enable-signup cannot be used together')
      if (args.values['disable-signup'] === true) patch.disable_signup = true
      if (args.values['enable-signup'] === true) patch.disable_signup = false
      const autoconfirm = stringOption(args, 'autoconfirm', false)
      if (autoconfirm !== undefined) {
        if (!['on', 'off', 'true', 'false'].includes(autoconfirm)) throw refusedValue(`--autoconfirm must be on or off, got "${autoconfirm}"`)
        patch.mailer_autoconfirm = autoconfirm === 'on' || autoconfirm === 'true'
      }
      for (const [flag, key] of Object.entries(SWITCH_NAMES)) {
        const raw = stringOption(args, flag, false)
        if (raw === undefined) continue
        // on|off reads as the issue's users write it; true|false as the rest of the CLI.
        if (!['true', 'false', 'on', 'off'].includes(raw)) throw refusedValue(`--${flag} must be true or false, got "${raw}"`)
        patch[key] = raw === 'true' || raw === 'on'
      }
      for (const [flag, key] of Object.entries(HOOK_FLAGS)) {
        // "" is allowed here: it removes the hook (or its secrets).
        let raw = args.values[flag] as string | undefined
        if (raw === undefined) continue
        if (flag === 'send-email-hook-secret' && raw === '-') raw = (await context.readStdin()).trim()
        patch[key] = raw.trim() === '' ? null : raw.trim()
      }
      for (const [flag, key] of Object.entries(WEBAUTHN_TEXT)) {
        const raw = stringOption(args, flag, false)
        if (raw === undefined) continue
        const value = raw.trim()
        patch[key] = value === 'default' ? null : key === 'webauthn_rp_origins' ? value.split(',').map((o) => o.trim()).filter((o) => o !== '') : value
      }
      const controlPlane = await context.controlPlane()
      const authEnabled = (await getProject(controlPlane, ref)).authEnabled
      if (Object.keys(patch).length === 0) return { ...(await getAuthSettings(controlPlane, ref)), auth_enabled: authEnabled }
      const before: Record<string, unknown> = await getAuthSettings(controlPlane, ref)
      const after = await setAuthOptions(controlPlane, ref, patch)
      // What the change did, by the view's names (a secret counts as changed when given: it is never shown).
      const changed = Object.keys(patch).filter((key) => key === 'hook_send_email_secrets' || JSON.stringify(before[key]) !== JSON.stringify((after as Record<string, unknown>)[key]))
      return { ...after, auth_enabled: authEnabled, changed }
    },
    human: showSettings,
  },
  {
    words: ['auth', 'redirects'],
    positionals: ['REF'],
    usage: 'auth redirects REF [--site-url URL] [--add URL ...] [--remove URL ...] [--allow URL ... --replace]',
    summary: 'Show or change the site URL and the other addresses sign-ins may return to',
    options: {
      'site-url': { type: 'string' },
      add: { type: 'string', multiple: true },
      remove: { type: 'string', multiple: true },
      allow: { type: 'string', multiple: true },
      replace: { type: 'boolean' },
    },
    optionHelp: {
      'site-url': 'where sign-ins return when the app asks for no other address (http or https)',
      add: 'put an address on the allow list; repeat for each (globs such as http://localhost:*/** and app schemes allowed)',
      remove: 'take an address off the allow list; repeat for each',
      allow: 'the whole allow list, replacing it; repeat for each address (with --replace when it drops an address now on the list)',
      replace: 'confirm that --allow replaces the list, dropping the addresses it does not name',
    },
    notes: 'Without options it shows the site URL and the allow list.',
    fieldFlags: FIELD_FLAGS,
    async run(context, args) {
      const ref = args.positionals[0]!
      const siteUrl = stringOption(args, 'site-url', false)
      const allow = args.values.allow as string[] | undefined
      const add = args.values.add as string[] | undefined
      const remove = args.values.remove as string[] | undefined
      if (args.values.replace === true && allow === undefined) throw new UsageError('--replace goes with --allow URL ...: the list that replaces the current one')
      const controlPlane = await context.controlPlane()
      const authEnabled = (await getProject(controlPlane, ref)).authEnabled
      if (siteUrl === undefined && allow === undefined && add === undefined && remove === undefined) return { ...(await getAuthSettings(controlPlane, ref)), auth_enabled: authEnabled }
      if (allow !== undefined && args.values.replace !== true) {
        // Replacing the list silently lost entries: say which ones would go.
        const dropped = (await getAuthSettings(controlPlane, ref)).additional_redirect_urls.filter((url) => !allow.includes(url) && !(add ?? []).includes(url))
        if (dropped.length > 0) {
          throw new UsageError(`--allow replaces the whole allow list, which would drop ${dropped.join(', ')}: add --replace to do that, or use --add URL to add to the list`)
        }
      }
      return { ...(await setRedirects(controlPlane, ref, { siteUrl, allow, add, remove })), auth_enabled: authEnabled }
    },
    human: showSettings,
  },
  {
    words: ['auth', 'templates'],
    positionals: ['REF'],
    usage: 'auth templates REF',
    summary: 'List the six email templates (custom or default) with their subjects',
    async run(context, args) {
      return listTemplates(await context.controlPlane(), args.positionals[0]!)
    },
    human: (rows: Awaited<ReturnType<typeof listTemplates>>) =>
      table([['KIND', 'SOURCE', 'SUBJECT'], ...rows.map((r) => [r.kind, r.custom ? 'custom' : 'default', r.subject])]),
  },
  {
    words: ['auth', 'template'],
    positionals: ['REF', 'KIND'],
    optionalPositionals: ['reset'],
    usage: `auth template REF KIND --subject TEXT --file BODY.html | reset   (KIND: ${KINDS.join(', ')})`,
    summary: 'Save an email template (its body must contain {{ .ConfirmationURL }}, or {{ .Token }} for reauthentication), or reset it to the default',
    options: { subject: { type: 'string' }, file: { type: 'string' } },
    optionHelp: {
      subject: "the mail's subject; Go template values such as {{ .Email }} allowed",
      file: 'an HTML file with the body: {{ .ConfirmationURL }} (or {{ .Token }} for reauthentication) must be in it',
    },
    optionValues: { subject: 'TEXT', file: 'BODY.html' },
    async run(context, args) {
      const [ref, kind, action] = args.positionals as [string, string, string | undefined]
      if (!(KINDS as readonly string[]).includes(kind)) throw refusedValue(`unknown template kind "${kind}": use one of ${KINDS.join(', ')}`)
      if (action !== undefined && action !== 'reset') throw new UsageError(`unexpected argument "${action}": the only action is reset`)
      const controlPlane = await context.controlPlane()
      if (action === 'reset') {
        if (args.values.subject !== undefined || args.values.file !== undefined) throw new UsageError('reset takes no --subject or --file')
        return resetTemplate(controlPlane, ref, kind)
      }
      const subject = stringOption(args, 'subject', true)
      const file = stringOption(args, 'file', true)
      let body: string
      try {
        body = fs.readFileSync(file, 'utf8')
      } catch (error) {
        throw refusedValue(`cannot read --file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
      }
      return setTemplate(controlPlane, ref, kind, { subject, body })
    },
    human: (r: { ref: string; kind: string; custom: boolean; subject: string }) =>
      r.custom ? `Saved the ${r.kind} template of ${r.ref} (subject "${r.subject}")` : `Reset the ${r.kind} template of ${r.ref} to the default`,
  },
  {
    words: ['auth', 'google'],
    positionals: ['REF'],
    usage: 'auth google REF [--client-id ID] [--stdin] [--additional-client-ids ID,ID] [--clear] [--enable|--disable]',
    summary: 'Google sign-in: client ID, client secret (read from standard input), on/off',
    options: { 'client-id': { type: 'string' }, stdin: { type: 'boolean' }, clear: { type: 'boolean' }, 'additional-client-ids': { type: 'string' }, enable: { type: 'boolean' }, disable: { type: 'boolean' } },
    optionHelp: {
      'client-id': 'the OAuth client ID of the project\'s own Google client',
      stdin: 'read the client secret from standard input (never from the command line)',
      clear: 'remove the client ID and the client secret (Google sign-in is then not offered)',
      'additional-client-ids': 'the project\'s iOS and Android client IDs, comma-separated, also accepted by native sign-in (signInWithIdToken); "" removes them',
      enable: 'turn Google sign-in on (offered once the client ID and secret are set and Auth is on)',
      disable: 'turn Google sign-in off, keeping the client ID and secret',
    },
    notes: 'Without options it shows the settings. Register the callback URL it prints with Google, exactly as written.',
    fieldFlags: FIELD_FLAGS,
    async run(context, args) {
      if (args.values.enable === true && args.values.disable === true) throw new UsageError('--enable and --disable cannot be used together')
      const clear = args.values.clear === true
      if (clear && (args.values['client-id'] !== undefined || args.values.stdin === true)) throw new UsageError('--clear cannot be used with --client-id or --stdin')
      const clientId = clear ? null : stringOption(args, 'client-id', false)
      let clientSecret: string | null | undefined = clear ? null : undefined
      if (args.values.stdin === true) {
        clientSecret = (await context.readStdin()).trim()
        if (clientSecret === '') throw refusedValue('--stdin read an empty client secret')
      }
      const enabled = args.values.enable === true ? true : args.values.disable === true ? false : undefined
      const extraIds = args.values['additional-client-ids'] as string | undefined
      const additionalClientIds = extraIds === undefined ? undefined : extraIds.split(',').map((id) => id.trim()).filter((id) => id !== '')
      const ref = args.positionals[0]!
      const controlPlane = await context.controlPlane()
      const result =
        clientId === undefined && clientSecret === undefined && enabled === undefined && additionalClientIds === undefined
          ? { ref, ...(await getAuthSettings(controlPlane, ref)).google }
          : await setGoogle(controlPlane, ref, { clientId, clientSecret, enabled, additionalClientIds })
      const authEnabled = (await getProject(controlPlane, ref)).authEnabled
      return {
        ...result,
        // Offered to users: configured (nothing missing) and the project's Auth on.
        offered: result.offered && authEnabled,
        auth_enabled: authEnabled,
        callback_url: `${baseUrlOf(ref, context.addressing.publicUrl, context.addressing.baseDomain)}/auth/v1/callback`,
      }
    },
    human: (r: { ref: string; client_id: string | null; client_secret_set: boolean; enabled: boolean; additional_client_ids: string[]; offered: boolean; missing: string[]; auth_enabled: boolean; callback_url: string }) =>
      [
        `client ID       ${r.client_id ?? '(not set)'}`,
        `app client IDs  ${r.additional_client_ids.length ? r.additional_client_ids.join(', ') : '(none)'}`,
        `client secret   ${r.client_secret_set ? '(set)' : '(not set)'}`,
        `switch          ${r.enabled ? 'on' : 'off'}`,
        `callback URL    ${r.callback_url}`,
        r.missing.length > 0
          ? `Google sign-in is not offered: missing ${r.missing.join(', ')}.`
          : r.auth_enabled
            ? 'Google sign-in is offered.'
            : `Google sign-in is configured, but Auth is off for ${r.ref}, so it is not offered: turn Auth on with baseplane products enable auth ${r.ref}`,
      ].join('\n'),
  },
]
