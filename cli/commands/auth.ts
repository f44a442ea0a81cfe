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
import { stringOption, table, UsageError, type Command } from '../command.ts'

type SettingsView = Awaited<ReturnType<typeof getAuthSettings>>

const showSettings = (s: SettingsView) =>
  [
    `site URL              ${s.site_url}`,
    `allowed redirects     ${s.additional_redirect_urls.length ? s.additional_redirect_urls.join(', ') : '(none)'}`,
    `mail per hour         ${s.mail_per_hour}`,
    `custom templates      ${s.custom_templates.length ? s.custom_templates.join(', ') : '(none)'}`,
    `google                ${s.google.offered ? 'offered' : `not offered (missing: ${s.google.missing.join(', ')})`}`,
  ].join('\n')

const OPTION_NAMES: Record<string, string> = {
  'mail-per-hour': 'mail_per_hour',
  'mail-min-interval': 'mail_min_interval_seconds',
  'otp-expiry': 'otp_expiry_seconds',
  'jwt-expiry': 'jwt_expiry_seconds',
  'refresh-reuse-interval': 'refresh_token_reuse_interval_seconds',
  'password-min-length': 'password_min_length',
}

export const authCommands: Command[] = [
  {
    words: ['auth', 'settings'],
    positionals: ['REF'],
    usage: 'auth settings REF [--mail-per-hour N] [--otp-expiry S] [--disable-signup|--enable-signup]',
    summary: "Show (or change) a project's auth settings",
    options: {
      ...Object.fromEntries(Object.keys(OPTION_NAMES).map((name) => [name, { type: 'string' as const }])),
      'disable-signup': { type: 'boolean' },
      'enable-signup': { type: 'boolean' },
    },
    async run(context, args) {
      const controlPlane = await context.controlPlane()
      const ref = args.positionals[0]!
      const patch: Record<string, unknown> = {}
      for (const [flag, key] of Object.entries(OPTION_NAMES)) {
        const raw = stringOption(args, flag, false)
        if (raw === undefined) continue
        if (!/^\d+$/.test(raw)) throw new UsageError(`--${flag} must be a whole number, got "${raw}"`)
        patch[key] = Number(raw)
      }
      if (args.values['disable-signup'] === true && args.values['enable-signup'] === true) throw new UsageError('--disable-signup and --enable-signup cannot be used together')
      if (args.values['disable-signup'] === true) patch.disable_signup = true
      if (args.values['enable-signup'] === true) patch.disable_signup = false
      return Object.keys(patch).length ? setAuthOptions(controlPlane, ref, patch) : getAuthSettings(controlPlane, ref)
    },
    human: showSettings,
  },
  {
    words: ['auth', 'redirects'],
    positionals: ['REF'],
    usage: 'auth redirects REF --site-url URL [--allow URL ...]',
    summary: 'Set the site URL and the other addresses sign-ins may return to',
    options: { 'site-url': { type: 'string' }, allow: { type: 'string', multiple: true } },
    async run(context, args) {
      const siteUrl = stringOption(args, 'site-url', false)
      const allow = args.values.allow as string[] | undefined
      if (siteUrl === undefined && allow === undefined) throw new UsageError('give --site-url URL, --allow URL, or both (usage: baseplane auth redirects REF --site-url URL [--allow URL ...])')
      return setRedirects(await context.controlPlane(), args.positionals[0]!, { siteUrl, allow })
    },
    human: showSettings,
  },
  {
    words: ['auth', 'templates'],
    positionals: ['REF'],
    usage: 'auth templates REF',
    summary: 'List the five email templates (custom or default) with their subjects',
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
    summary: 'Save an email template (its body must contain {{ .ConfirmationURL }}), or reset it to the default',
    options: { subject: { type: 'string' }, file: { type: 'string' } },
    async run(context, args) {
      const [ref, kind, action] = args.positionals as [string, string, string | undefined]
      if (!(KINDS as readonly string[]).includes(kind)) throw new UsageError(`unknown template kind "${kind}": use one of ${KINDS.join(', ')}`)
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
        throw new UsageError(`cannot read --file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
      }
      return setTemplate(controlPlane, ref, kind, { subject, body })
    },
    human: (r: { ref: string; kind: string; custom: boolean; subject: string }) =>
      r.custom ? `Saved the ${r.kind} template of ${r.ref} (subject "${r.subject}")` : `Reset the ${r.kind} template of ${r.ref} to the default`,
  },
  {
    words: ['auth', 'google'],
    positionals: ['REF'],
    usage: 'auth google REF [--client-id ID] [--stdin] [--enable|--disable]',
    summary: 'Google sign-in: client ID, client secret (read from standard input), on/off',
    options: { 'client-id': { type: 'string' }, stdin: { type: 'boolean' }, enable: { type: 'boolean' }, disable: { type: 'boolean' } },
    async run(context, args) {
      if (args.values.enable === true && args.values.disable === true) throw new UsageError('--enable and --disable cannot be used together')
      const clientId = stringOption(args, 'client-id', false)
      let clientSecret: string | undefined
      if (args.values.stdin === true) {
        clientSecret = (await context.readStdin()).trim()
        if (clientSecret === '') throw new UsageError('--stdin read an empty client secret')
      }
      const enabled = args.values.enable === true ? true : args.values.disable === true ? false : undefined
      const ref = args.positionals[0]!
      const controlPlane = await context.controlPlane()
      const result =
        clientId === undefined && clientSecret === undefined && enabled === undefined
          ? { ref, ...(await getAuthSettings(controlPlane, ref)).google }
          : await setGoogle(controlPlane, ref, { clientId, clientSecret, enabled })
      return { ...result, callback_url: `${baseUrlOf(ref, context.addressing.publicUrl, context.addressing.baseDomain)}/auth/v1/callback` }
    },
    human: (r: { ref: string; client_id: string | null; client_secret_set: boolean; enabled: boolean; offered: boolean; missing: string[]; callback_url: string }) =>
      [
        `client ID       ${r.client_id ?? '(not set)'}`,
        `client secret   ${r.client_secret_set ? '(set)' : '(not set)'}`,
        `switch          ${r.enabled ? 'on' : 'off'}`,
        `callback URL    ${r.callback_url}`,
        r.offered ? 'Google sign-in is offered.' : `Google sign-in is not offered: missing ${r.missing.join(', ')}.`,
      ].join('\n'),
  },
]
