// `baseplane auth settings REF` (issue 28 item 6), the real command line in a
// child process on a running platform's catalogue: it shows every setting
// the admin API's GET /projects/{ref}/auth answers, says after a change what
// was saved and shows the settings as they now are, and --autoconfirm
// true|false (on|off read too) switches mailer_autoconfirm, which a real
// sign-up with supabase-js then follows. A refused value changes nothing.
// Issue 37 item 8: on a project whose Auth is off the auth commands say so (on
// standard error) and still work; `auth redirects` shows the redirect settings
// only; `auth template REF KIND` prints the template, and a missing body file
// is refused clearly; an operation that changes nothing says so.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { createClient } from '@supabase/supabase-js'
import { runCli } from '../helpers/cli.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

type AuthView = Record<string, unknown> & { ref: string; google: { offered: boolean; missing: string[] } }

const platform = await startTestPlatform(t)
const project = await platform.createProject({ name: 'Cli Auth', auth: true })
const port = new URL(platform.origin).port
const baseplane = (args: string[]) => runCli(args, { DATABASE_URL: platform.catalogueUrl, PORT: port })
const settings = async () =>
  (await request<AuthView>(`${platform.origin}/platform/v1/projects/${project.ref}/auth`, { headers: { authorization: `Bearer ${platform.config.adminToken}` } })).json
const signUp = (email: string) => createClient(project.baseUrl, project.anonKey, { auth: { persistSession: false } }).auth.signUp({ email, password: 'correct horse battery' })

t.test('every setting the admin API answers is shown', async (t) => {
  const view = await settings()
  const shown = await baseplane(['auth', 'settings', project.ref])
  t.equal(shown.code, 0, shown.stderr)
  const lines = shown.stdout.trimEnd().split('\n')
  const line = (label: string) => lines.find((l) => l.startsWith(`${label} `)) ?? `(no ${label} line)`
  t.equal(line('site URL'), `site URL              ${view.site_url}`)
  t.equal(line('allowed redirects'), 'allowed redirects     (none)')
  t.equal(line('sign-ups'), 'sign-ups              open')
  t.equal(line('autoconfirm'), 'autoconfirm           off: new addresses are confirmed by a mailed link')
  t.equal(line('mail per hour'), `mail per hour         ${view.mail_per_hour}`)
  t.equal(line('mail interval'), `mail interval         ${view.mail_min_interval_seconds} s between two mails to one address`)
  t.equal(line('link and code expiry'), `link and code expiry  ${view.otp_expiry_seconds} s`)
  t.equal(line('access token expiry'), `access token expiry   ${view.jwt_expiry_seconds} s`)
  t.equal(line('refresh reuse'), `refresh reuse         ${view.refresh_token_reuse_interval_seconds} s`)
  t.equal(line('shortest password'), `shortest password     ${view.password_min_length}`)
  t.equal(line('custom templates'), 'custom templates      (none)')
  t.match(line('google'), 'google                not offered (missing: ')
  t.equal(line('email change'), 'email change          confirmed by the current and the new address')
  t.equal(line('password change'), 'password change       no reauthentication')
  t.equal(line('anonymous sign-ins'), `anonymous sign-ins    off (at most ${view.rate_limit_anonymous_users} per address per hour when on)`)
  t.equal(line('access token hook'), 'access token hook     (none)')
  t.equal(line('send email hook'), 'send email hook       (none: Auth sends the mail)')
  t.equal(line('webauthn factors'), `webauthn factors      enrol off, verify off; relying party ${view.webauthn_rp_id} ("${view.webauthn_rp_display_name}"), origins ${(view.webauthn_rp_origins as string[]).join(', ')}`)
  t.equal(line('manual linking'), 'manual linking        off')
  t.equal(lines.length, 19, 'one line each (related settings share one), nothing else')
  // Every field of the view is covered by a line above (ref is the command's own argument).
  const covered = [
    'site_url', 'additional_redirect_urls', 'disable_signup', 'mailer_autoconfirm', 'mail_per_hour', 'mail_min_interval_seconds', 'otp_expiry_seconds',
    'jwt_expiry_seconds', 'refresh_token_reuse_interval_seconds', 'password_min_length', 'custom_templates', 'google', 'mailer_secure_email_change_enabled',
    'security_update_password_require_reauthentication', 'external_anonymous_users_enabled', 'rate_limit_anonymous_users', 'hook_custom_access_token_uri',
    'hook_send_email_uri', 'hook_send_email_secrets_set', 'mfa_web_authn_enroll_enabled', 'mfa_web_authn_verify_enabled', 'webauthn_rp_id',
    'webauthn_rp_display_name', 'webauthn_rp_origins', 'security_manual_linking_enabled',
  ]
  t.same(Object.keys(view).filter((key) => key !== 'ref').sort(), [...covered].sort(), 'the admin API has no setting the command leaves out')
})

t.test('--autoconfirm on: confirmed, shown, and a sign-up is confirmed at once', async (t) => {
  const changed = await baseplane(['auth', 'settings', project.ref, '--autoconfirm', 'on', '--mail-per-hour', '12'])
  t.equal(changed.code, 0, changed.stderr)
  const [first, ...rest] = changed.stdout.trimEnd().split('\n')
  t.equal(first, `Saved the auth settings of ${project.ref} (mails per hour, addresses confirmed without a mail); it applies from the next request. They are now:`)
  t.ok(rest.includes('autoconfirm           on: new addresses are confirmed without a mail'))
  t.ok(rest.includes('mail per hour         12'))
  t.equal(rest.length, 19, 'then every setting as it now is')
  t.match(await settings(), { mailer_autoconfirm: true, mail_per_hour: 12 }, 'saved, as the admin API reads it')
  const { data, error } = await signUp('auto@example.com')
  t.error(error)
  t.ok(data.session, 'signed up and signed in without a mail')
  t.ok(data.user?.email_confirmed_at, 'the address is confirmed')

  const json = JSON.parse((await baseplane(['auth', 'settings', project.ref, '--autoconfirm', 'on', '--json'])).stdout)
  t.match(json, { mailer_autoconfirm: true, changed: [] }, 'JSON: the settings and what changed (nothing)')
  const same = await baseplane(['auth', 'settings', project.ref, '--autoconfirm', 'on'])
  t.match(same.stdout, new RegExp(`^Saved the auth settings of ${project.ref}; nothing changed\\. They are now:\\n`))
})

t.test('--autoconfirm false: a sign-up waits for its mail; a bad value changes nothing', async (t) => {
  const off = await baseplane(['auth', 'settings', project.ref, '--autoconfirm', 'false'])
  t.equal(off.code, 0, off.stderr)
  t.match(off.stdout, `Saved the auth settings of ${project.ref} (addresses confirmed by mail); it applies from the next request.`)
  t.match(off.stdout, 'autoconfirm           off: new addresses are confirmed by a mailed link')
  t.equal((await settings()).mailer_autoconfirm, false)
  const { data, error } = await signUp('mailed@example.com')
  t.error(error)
  t.equal(data.session, null, 'no session until the address is confirmed')

  const before = await settings()
  const refused = await baseplane(['auth', 'settings', project.ref, '--autoconfirm', 'maybe', '--mail-per-hour', '3'])
  t.same({ code: refused.code, stdout: refused.stdout, stderr: refused.stderr }, { code: 1, stdout: '', stderr: 'baseplane: --autoconfirm must be true or false, got "maybe"\n' })
  t.same(await settings(), before, 'nothing saved')
})

t.test('a write-only hook secret given again is no change', async (t) => {
  const secret = `v1,whsec_${Buffer.alloc(24, 7).toString('base64')}`
  const args = ['auth', 'settings', project.ref, '--send-email-hook', 'https://mail.example.test/hook', '--send-email-hook-secret', secret]
  const first = await baseplane(args)
  t.equal(first.code, 0, first.stderr)
  t.match(first.stdout, `Saved the auth settings of ${project.ref} (send email hook, send email hook secrets); it applies from the next request.`)
  const again = await baseplane(args)
  t.equal(again.code, 0, again.stderr)
  t.match(again.stdout, new RegExp(`^Saved the auth settings of ${project.ref}; nothing changed\\. They are now:\\n`))
  const other = await baseplane(['auth', 'settings', project.ref, '--send-email-hook-secret', `v1,whsec_${Buffer.alloc(24, 8).toString('base64')}`])
  t.match(other.stdout, `Saved the auth settings of ${project.ref} (send email hook secrets); it applies from the next request.`, 'another secret is a change, though neither is shown')
  const removed = await baseplane(['auth', 'settings', project.ref, '--send-email-hook', '', '--send-email-hook-secret', ''])
  t.equal(removed.code, 0, removed.stderr)
  t.match(await settings(), { hook_send_email_uri: null, hook_send_email_secrets_set: 0 })
})

t.test('auth redirects shows the site URL and the allow list only, and says what a change did', async (t) => {
  const shown = await baseplane(['auth', 'redirects', project.ref])
  t.equal(shown.code, 0, shown.stderr)
  const view = await settings()
  t.same(shown.stdout.trimEnd().split('\n'), [`site URL              ${view.site_url}`, 'allowed redirects     (none)'])
  const json = JSON.parse((await baseplane(['auth', 'redirects', project.ref, '--json'])).stdout)
  t.same(json, { ref: project.ref, site_url: view.site_url, additional_redirect_urls: [], auth_enabled: true })

  const added = await baseplane(['auth', 'redirects', project.ref, '--add', 'https://app.example.test/**'])
  t.equal(added.code, 0, added.stderr)
  t.same(added.stdout.trimEnd().split('\n'), [
    `Saved the redirects of ${project.ref} (allowed redirect URLs); it applies from the next request. They are now:`,
    `site URL              ${view.site_url}`,
    'allowed redirects     https://app.example.test/**',
  ])
  const again = await baseplane(['auth', 'redirects', project.ref, '--add', 'https://app.example.test/**', '--site-url', view.site_url as string])
  t.equal(again.code, 0, again.stderr)
  t.equal(again.stdout.split('\n')[0], `Saved the redirects of ${project.ref}; nothing changed. They are now:`)
  t.match(JSON.parse((await baseplane(['auth', 'redirects', project.ref, '--remove', 'https://app.example.test/**', '--json'])).stdout), { additional_redirect_urls: [], changed: ['additional_redirect_urls'] })
})

t.test('auth template REF KIND prints the template; a change is checked, and a repeat is no change', async (t) => {
  const shown = await baseplane(['auth', 'template', project.ref, 'recovery'])
  t.equal(shown.code, 0, shown.stderr)
  const [kind, subject, label, ...body] = shown.stdout.trimEnd().split('\n')
  t.same([kind, subject, label], ['kind     recovery (default)', 'subject  Reset Your Password', 'body'])
  t.match(body.join('\n'), '<a href="{{ .ConfirmationURL }}"')
  t.match(JSON.parse((await baseplane(['auth', 'template', project.ref, 'recovery', '--json'])).stdout), { ref: project.ref, kind: 'recovery', custom: false, subject: 'Reset Your Password', body: /ConfirmationURL/ })

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-cli-tmpl-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'reset.html')
  fs.writeFileSync(file, '<a href="{{ .ConfirmationURL }}">Reset</a>')
  const missing = await baseplane(['auth', 'template', project.ref, 'recovery', '--subject', 'Reset it', '--file', path.join(dir, 'nosuch.html')])
  t.same(missing, { code: 1, stdout: '', stderr: `baseplane: cannot read --file ${path.join(dir, 'nosuch.html')}: there is no such file\n` })
  const folder = await baseplane(['auth', 'template', project.ref, 'recovery', '--subject', 'Reset it', '--file', dir])
  t.same(folder, { code: 1, stdout: '', stderr: `baseplane: cannot read --file ${dir}: it is a folder, not a file\n` })
  const half = await baseplane(['auth', 'template', project.ref, 'recovery', '--subject', 'Reset it'])
  t.equal(half.code, 2)
  t.match(half.stderr, /^baseplane: --subject and --file go together: give both to save the template, neither to print it \(usage: baseplane auth template REF KIND /)
  t.match(JSON.parse((await baseplane(['auth', 'template', project.ref, 'recovery', '--json'])).stdout), { custom: false }, 'nothing of the refused runs was saved')

  const saved = await baseplane(['auth', 'template', project.ref, 'recovery', '--subject', 'Reset it', '--file', file])
  t.equal(saved.code, 0, saved.stderr)
  t.equal(saved.stdout, `Saved the recovery template of ${project.ref} (subject "Reset it"); it applies from the next mail.\n`)
  const repeated = await baseplane(['auth', 'template', project.ref, 'recovery', '--subject', 'Reset it', '--file', file])
  t.equal(repeated.stdout, `The recovery template of ${project.ref} already has this subject and body; nothing changed.\n`)
  const printed = await baseplane(['auth', 'template', project.ref, 'recovery'])
  t.same(printed.stdout.trimEnd().split('\n'), ['kind     recovery (custom)', 'subject  Reset it', 'body', '<a href="{{ .ConfirmationURL }}">Reset</a>'])
  t.equal((await baseplane(['auth', 'template', project.ref, 'recovery', 'reset'])).stdout, `Reset the recovery template of ${project.ref} to the default; it applies from the next mail.\n`)
  t.equal((await baseplane(['auth', 'template', project.ref, 'recovery', 'reset'])).stdout, `The recovery template of ${project.ref} is the default already; nothing changed.\n`)
})

t.test('on a project whose Auth is off, auth settings, redirects and google say so, and still show and save', async (t) => {
  const off = await platform.createProject({ name: 'Cli Auth Off' })
  const note = `baseplane: note: Auth is off for ${off.ref}; its settings are kept and apply once it is on: baseplane products enable auth ${off.ref}\n`
  const shown = await baseplane(['auth', 'settings', off.ref])
  t.same({ code: shown.code, stderr: shown.stderr, lines: shown.stdout.trimEnd().split('\n').length }, { code: 0, stderr: note, lines: 19 })
  const changed = await baseplane(['auth', 'settings', off.ref, '--mail-per-hour', '7', '--json'])
  t.same({ code: changed.code, stderr: changed.stderr }, { code: 0, stderr: note })
  t.match(JSON.parse(changed.stdout), { mail_per_hour: 7, auth_enabled: false, changed: ['mail_per_hour'] }, 'saved, and standard output stays JSON')
  const redirects = await baseplane(['auth', 'redirects', off.ref, '--site-url', 'https://off.example.test'])
  t.same({ code: redirects.code, stderr: redirects.stderr }, { code: 0, stderr: note })
  t.match(redirects.stdout, 'site URL              https://off.example.test')
  const google = await baseplane(['auth', 'google', off.ref])
  t.same({ code: google.code, stderr: google.stderr }, { code: 0, stderr: note })
  t.match(google.stdout, 'Google sign-in is not offered: missing client ID, client secret, the on switch (enable).')
  const on = await baseplane(['auth', 'settings', project.ref])
  t.equal(on.stderr, '', 'no note where Auth is on')
})
