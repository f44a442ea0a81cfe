// `baseplane auth ...`: redirect addresses, email templates, Google sign-in
// and other auth settings of a project (control-plane/auth-settings.ts).
// `auth settings`' flags come from Auth's settings table (auth-settings-flags.ts).
// On a project whose Auth is off each says so on standard error, and still
// shows and saves: the settings apply once Auth is on.
import fs from 'node:fs'
import {
  changeAuthOptions,
  changeRedirects,
  getAuthSettings,
  getTemplate,
  KINDS,
  listTemplates,
  redirectsView,
  restoreTemplate,
  saveTemplate,
  setGoogle,
  type AuthSettingsView,
} from '../../control-plane/auth-settings.ts'
import { baseUrlOf } from '../../lib/catalogue.ts'
import { refusedValue, stringOption, table, UsageError, type CliContext, type Command } from '../command.ts'
import { getProject } from '../../control-plane/projects.ts'
import type { ControlPlane } from '../../control-plane/control-plane.ts'
import { changeWord, SETTINGS_FIELD_FLAGS, SETTINGS_FLAGS, settingsPatch } from './auth-settings-flags.ts'

type SettingsView = AuthSettingsView & { auth_enabled: boolean }

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

/** The settings; after a change, first a line saying what was saved (the settings as they now are follow). */
const showSettings = (s: SettingsView & { changed?: string[] }) =>
  [
    ...(s.changed
      ? [
          s.changed.length === 0
            ? `Saved the auth settings of ${s.ref}; nothing changed. They are now:`
            : `Saved the auth settings of ${s.ref} (${s.changed.map((name) => changeWord(name, (s as Record<string, unknown>)[name])).join(', ')}); it applies from the next request. They are now:`,
        ]
      : []),
    ...settingLines(s),
  ].join('\n')

/** What `auth redirects` calls its two settings in the line saying what changed. */
const REDIRECT_WORDS: Record<string, string> = { site_url: 'site URL', additional_redirect_urls: 'allowed redirect URLs' }

type RedirectsShown = ReturnType<typeof redirectsView> & { auth_enabled: boolean; changed?: string[] }

const showRedirects = (r: RedirectsShown) =>
  [
    ...(r.changed
      ? [
          r.changed.length === 0
            ? `Saved the redirects of ${r.ref}; nothing changed. They are now:`
            : `Saved the redirects of ${r.ref} (${r.changed.map((name) => REDIRECT_WORDS[name] ?? name).join(', ')}); it applies from the next request. They are now:`,
        ]
      : []),
    `site URL              ${r.site_url}`,
    `allowed redirects     ${r.additional_redirect_urls.length ? r.additional_redirect_urls.join(', ') : '(none)'}`,
  ].join('\n')

/** The platform's names for what these commands set, and the flags that set them. */
const FIELD_FLAGS: Record<string, string> = {
  ...SETTINGS_FIELD_FLAGS,
  site_url: '--site-url',
  additional_redirect_urls: '--add/--remove/--allow',
  'google.client_id': '--client-id',
  'google.client_secret': 'the client secret (--stdin)',
  'google.enabled': '--enable/--disable',
  'google.additional_client_ids': '--additional-client-ids',
}

/**
 * Whether the project's Auth is on; when it is off, a note on standard error
 * (the settings are kept and apply once it is on), as the README says these
 * commands do. Standard output stays the command's own (JSON with --json).
 */
async function authEnabledOf(context: CliContext, controlPlane: ControlPlane, ref: string): Promise<boolean> {
  const enabled = (await getProject(controlPlane, ref)).authEnabled
  if (!enabled) context.note(`Auth is off for ${ref}; its settings are kept and apply once it is on: baseplane products enable auth ${ref}`)
  return enabled
}

/** Why a body file could not be read, in words (not the errno code). */
function unreadable(file: string, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException).code
  const why =
    code === 'ENOENT'
      ? 'there is no such file'
      : code === 'EISDIR'
        ? 'it is a folder, not a file'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : (error as Error).message
  return refusedValue(`cannot read --file ${file}: ${why}`)
}

interface TemplateShown {
  ref: string
  kind: string
  custom: boolean
  subject: string
  body: string
  /** Set after a save or a reset: whether it changed the template. */
  changed?: boolean
}

function showTemplate(r: TemplateShown): string {
  if (r.changed === undefined) return [`kind     ${r.kind} (${r.custom ? 'custom' : 'default'})`, `subject  ${r.subject}`, 'body', r.body.replace(/\n$/, '')].join('\n')
  if (r.custom) {
    return r.changed
      ? `Saved the ${r.kind} template of ${r.ref} (subject "${r.subject}"); it applies from the next mail.`
      : `The ${r.kind} template of ${r.ref} already has this subject and body; nothing changed.`
  }
  return r.changed ? `Reset the ${r.kind} template of ${r.ref} to the default; it applies from the next mail.` : `The ${r.kind} template of ${r.ref} is the default already; nothing changed.`
}

export const authCommands: Command[] = [
  {
    words: ['auth', 'settings'],
    positionals: ['REF'],
    usage: `auth settings REF ${SETTINGS_FLAGS.usage}`,
    summary: "Show (or change) a project's auth settings",
    options: SETTINGS_FLAGS.options,
    optionHelp: SETTINGS_FLAGS.optionHelp,
    optionValues: SETTINGS_FLAGS.optionValues,
    notes: 'Without options it shows every setting; after a change it says what was saved, then shows them all. Changes apply from the next request.',
    fieldFlags: FIELD_FLAGS,
    async run(context, args) {
      const ref = args.positionals[0]!
      const patch = await settingsPatch(args, context)
      const controlPlane = await context.controlPlane()
      if (Object.keys(patch).length === 0) {
        const settings = await getAuthSettings(controlPlane, ref)
        return { ...settings, auth_enabled: await authEnabledOf(context, controlPlane, ref) }
      }
      const { settings, changed } = await changeAuthOptions(controlPlane, ref, patch)
      return { ...settings, auth_enabled: await authEnabledOf(context, controlPlane, ref), changed }
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
    notes: 'Without options it shows the site URL and the allow list; after a change it says what was saved, then shows them.',
    fieldFlags: FIELD_FLAGS,
    async run(context, args): Promise<RedirectsShown> {
      const ref = args.positionals[0]!
      const siteUrl = stringOption(args, 'site-url', false)
      const allow = args.values.allow as string[] | undefined
      const add = args.values.add as string[] | undefined
      const remove = args.values.remove as string[] | undefined
      if (args.values.replace === true && allow === undefined) throw new UsageError('--replace goes with --allow URL ...: the list that replaces the current one')
      const controlPlane = await context.controlPlane()
      if (siteUrl === undefined && allow === undefined && add === undefined && remove === undefined) {
        const settings = await getAuthSettings(controlPlane, ref)
        return { ...redirectsView(settings), auth_enabled: await authEnabledOf(context, controlPlane, ref) }
      }
      if (allow !== undefined && args.values.replace !== true) {
        // Replacing the list silently lost entries: say which ones would go.
        const dropped = (await getAuthSettings(controlPlane, ref)).additional_redirect_urls.filter((url) => !allow.includes(url) && !(add ?? []).includes(url))
        if (dropped.length > 0) {
          throw new UsageError(`--allow replaces the whole allow list, which would drop ${dropped.join(', ')}: add --replace to do that, or use --add URL to add to the list`)
        }
      }
      const { settings, changed } = await changeRedirects(controlPlane, ref, { siteUrl, allow, add, remove })
      return { ...redirectsView(settings), auth_enabled: await authEnabledOf(context, controlPlane, ref), changed }
    },
    human: showRedirects,
  },
  {
    words: ['auth', 'templates'],
    positionals: ['REF'],
    usage: 'auth templates REF',
    summary: 'List the six email templates (custom or default) with their subjects',
    async run(context, args) {
      const ref = args.positionals[0]!
      const controlPlane = await context.controlPlane()
      const templates = await listTemplates(controlPlane, ref)
      await authEnabledOf(context, controlPlane, ref)
      return templates
    },
    human: (rows: Array<{ kind: string; custom: boolean; subject: string }>) =>
      table([['KIND', 'SOURCE', 'SUBJECT'], ...rows.map((r) => [r.kind, r.custom ? 'custom' : 'default', r.subject])]),
  },
  {
    words: ['auth', 'template'],
    positionals: ['REF', 'KIND'],
    optionalPositionals: ['reset'],
    usage: `auth template REF KIND [--subject TEXT --file BODY.html | reset]   (KIND: ${KINDS.join(', ')})`,
    summary:
      'Print an email template (subject and body), save one (its body must contain {{ .ConfirmationURL }}, or {{ .Token }} for reauthentication), or reset it to the default',
    options: { subject: { type: 'string' }, file: { type: 'string' } },
    optionHelp: {
      subject: "the mail's subject; Go template values such as {{ .Email }} allowed (with --file)",
      file: 'an HTML file with the body: {{ .ConfirmationURL }} (or {{ .Token }} for reauthentication) must be in it (with --subject)',
    },
    notes: 'Without options it prints the template in use (the saved one, or the default). A save or reset that leaves it as it was says so.',
    async run(context, args): Promise<TemplateShown> {
      const [ref, kind, action] = args.positionals as [string, string, string | undefined]
      if (!(KINDS as readonly string[]).includes(kind)) throw refusedValue(`unknown template kind "${kind}": use one of ${KINDS.join(', ')}`)
      if (action !== undefined && action !== 'reset') throw new UsageError(`unexpected argument "${action}": the only action is reset`)
      const subject = stringOption(args, 'subject', false)
      const file = stringOption(args, 'file', false)
      if (action === 'reset' && (subject !== undefined || file !== undefined)) throw new UsageError('reset takes no --subject or --file')
      if ((subject === undefined) !== (file === undefined)) {
        throw new UsageError(`--subject and --file go together: give both to save the template, neither to print it (usage: baseplane auth template REF KIND [--subject TEXT --file BODY.html | reset])`)
      }
      let body: string | undefined
      if (file !== undefined) {
        try {
          body = fs.readFileSync(file, 'utf8')
        } catch (error) {
          throw unreadable(file, error)
        }
      }
      const controlPlane = await context.controlPlane()
      const done =
        action === 'reset'
          ? await restoreTemplate(controlPlane, ref, kind)
          : subject !== undefined && body !== undefined
            ? await saveTemplate(controlPlane, ref, kind, { subject, body })
            : undefined
      const shown = done ? { ...done.template, changed: done.changed } : await getTemplate(controlPlane, ref, kind)
      await authEnabledOf(context, controlPlane, ref)
      return shown
    },
    human: showTemplate,
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
      const authEnabled = await authEnabledOf(context, controlPlane, ref)
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
