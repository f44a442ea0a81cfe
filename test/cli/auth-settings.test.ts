// `baseplane auth settings REF` (issue 28 item 6), the real command line in a
// child process on a running platform's catalogue: it shows every setting
// the admin API's GET /projects/{ref}/auth answers, says after a change what
// was saved and shows the settings as they now are, and --autoconfirm on|off
// switches mailer_autoconfirm, which a real sign-up with supabase-js then
// follows. A refused value changes nothing.
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
  t.equal(first, `Saved the auth settings of ${project.ref} (mail per hour, autoconfirm); it applies from the next request. They are now:`)
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

t.test('--autoconfirm off: a sign-up waits for its mail; a bad value changes nothing', async (t) => {
  const off = await baseplane(['auth', 'settings', project.ref, '--autoconfirm', 'off'])
  t.equal(off.code, 0, off.stderr)
  t.match(off.stdout, `Saved the auth settings of ${project.ref} (autoconfirm); it applies from the next request.`)
  t.match(off.stdout, 'autoconfirm           off: new addresses are confirmed by a mailed link')
  t.equal((await settings()).mailer_autoconfirm, false)
  const { data, error } = await signUp('mailed@example.com')
  t.error(error)
  t.equal(data.session, null, 'no session until the address is confirmed')

  const before = await settings()
  const refused = await baseplane(['auth', 'settings', project.ref, '--autoconfirm', 'maybe', '--mail-per-hour', '3'])
  t.same({ code: refused.code, stdout: refused.stdout, stderr: refused.stderr }, { code: 1, stdout: '', stderr: 'baseplane: --autoconfirm must be on or off, got "maybe"\n' })
  t.same(await settings(), before, 'nothing saved')
})
