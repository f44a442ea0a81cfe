// Email: templates (saved, refused without {{ .ConfirmationURL }}, reset),
// used by the next mail; the outbox without SMTP and `baseplane mail list`;
// the per-project ceiling on mails per hour; the CLI's auth commands.
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { listMail, listTemplates, resetTemplate, setAuthOptions, setTemplate } from '../../control-plane/auth-settings.ts'
import { startTestPlatform } from '../helpers/platform.ts'
import { runCli } from '../helpers/cli.ts'
import { authFixture, call, codeOf, linkOf } from './helpers.ts'

const run = promisify(execFile)

/** The built command line on the test's catalogue (test/helpers/cli.ts). */
const cli = (catalogueUrl: string, args: string[], input?: string) => runCli(args, { DATABASE_URL: catalogueUrl }, input)

t.test('templates over SMTP, the hourly ceiling, the CLI', async (t) => {
  const f = await authFixture(t)
  const cp = f.test.platform.controlPlane
  const supabase = f.anon()

  await t.test('a saved template is used by the next mail; reset restores the default', async (t) => {
    const refused = setTemplate(cp, f.project.ref, 'confirmation', { subject: 'Hi', body: '<p>No link here {{ .Token }}</p>' })
    await t.rejects(refused, { code: 'invalid_argument', message: /must contain \{\{ \.ConfirmationURL \}\}/ })
    await setTemplate(cp, f.project.ref, 'confirmation', {
      subject: 'Welcome {{ .Email }}',
      body: '<p>Code {{ .Token }} for {{ .SiteURL }}</p><a href="{{ .ConfirmationURL }}">go</a>',
    })
    const list = await listTemplates(cp, f.project.ref)
    t.same(list.map((x) => [x.kind, x.custom]), [['confirmation', true], ['recovery', false], ['magic_link', false], ['invite', false], ['email_change', false], ['reauthentication', false]])
    let since = f.mail.messages.length
    t.error((await supabase.auth.signUp({ email: 'tmpl@example.test', password: 'template pw' })).error)
    let mail = await f.mail.next('tmpl@example.test', since)
    t.equal(mail.subject, 'Welcome tmpl@example.test')
    t.match(mail.html, /<p>Code \d{6} for https:\/\/app\.example\.test<\/p>/)
    t.ok(linkOf(mail).includes('/auth/v1/verify?token='))
    await resetTemplate(cp, f.project.ref, 'confirmation')
    since = f.mail.messages.length
    t.equal((await call(f, 'POST', '/resend', { type: 'signup', email: 'tmpl@example.test' })).status, 200)
    mail = await f.mail.next('tmpl@example.test', since)
    t.equal(mail.subject, 'Confirm Your Email')
    t.match(codeOf(mail), /^\d{6}$/)
  })

  await t.test('the per-project ceiling answers over_email_send_rate_limit', async (t) => {
    const sent = (await listMail(cp, f.project.ref)).length
    await setAuthOptions(cp, f.project.ref, { mail_per_hour: sent + 1 })
    t.error((await supabase.auth.signInWithOtp({ email: 'ceiling1@example.test' })).error)
    const over = await supabase.auth.signInWithOtp({ email: 'ceiling2@example.test' })
    t.equal(over.error?.status, 429)
    t.equal(over.error?.code, 'over_email_send_rate_limit')
    t.equal(over.error?.message, 'Email rate limit exceeded')
    const created = await f.admin().auth.admin.listUsers()
    t.notOk(created.data.users.some((u) => u.email === 'ceiling2@example.test'), 'nothing partial is written')
    await setAuthOptions(cp, f.project.ref, { mail_per_hour: 1000, mail_min_interval_seconds: 60 })
    const soon = await call(f, 'POST', '/otp', { email: 'ceiling1@example.test' })
    t.equal(soon.status, 429)
    t.equal(soon.body.code, 'over_email_send_rate_limit')
    t.match(soon.body.message, /^For security purposes, you can only request this after \d+ seconds\.$/)
    await setAuthOptions(cp, f.project.ref, { mail_min_interval_seconds: 0 })
  })

  await t.test('CLI: redirects, templates, template, settings', async (t) => {
    const url = f.test.catalogueUrl
    const ref = f.project.ref
    const listed = async () => JSON.parse((await cli(url, ['auth', 'redirects', ref, '--json'])).stdout).additional_redirect_urls
    const before = await listed()
    t.ok(before.length > 0, 'the fixture allows an address')
    // --allow would drop what is on the list: refused, naming it, and nothing changes.
    let r = await cli(url, ['auth', 'redirects', ref, '--site-url', 'https://shop.example.test', '--allow', 'http://localhost:5173/**', '--allow', 'myapp://callback'])
    t.equal(r.code, 2)
    t.match(r.stderr, `--allow replaces the whole allow list, which would drop ${before.join(', ')}: add --replace to do that, or use --add URL to add to the list`)
    t.same(await listed(), before, 'nothing changed')
    r = await cli(url, ['auth', 'redirects', ref, '--site-url', 'https://shop.example.test', '--allow', 'http://localhost:5173/**', '--allow', 'myapp://callback', '--replace'])
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'site URL              https://shop.example.test')
    t.match(r.stdout, 'allowed redirects     http://localhost:5173/**, myapp://callback')
    r = await cli(url, ['auth', 'redirects', ref, '--add', 'https://*.shop.example.test/**', '--add', 'myapp://callback'])
    t.equal(r.code, 0, r.stderr)
    t.same(await listed(), ['http://localhost:5173/**', 'myapp://callback', 'https://*.shop.example.test/**'], 'added once each, in order')
    r = await cli(url, ['auth', 'redirects', ref, '--remove', 'https://*.shop.example.test/**'])
    t.equal(r.code, 0, r.stderr)
    r = await cli(url, ['auth', 'redirects', ref, '--remove', 'https://never.example.test', '--add', 'https://other.example.test'])
    t.equal(r.code, 1)
    t.match(r.stderr, 'baseplane: "https://never.example.test" is not on the allow list of')
    t.same(await listed(), ['http://localhost:5173/**', 'myapp://callback'], 'a refused change writes nothing')
    r = await cli(url, ['auth', 'redirects', ref, '--allow', 'http://localhost:5173/**', '--allow', 'myapp://callback', '--allow', 'https://kept.example.test'])
    t.equal(r.code, 0, 'an --allow that drops nothing needs no --replace')
    r = await cli(url, ['auth', 'redirects', ref, '--remove', 'https://kept.example.test'])
    t.equal(r.code, 0, r.stderr)
    r = await cli(url, ['auth', 'redirects', ref, '--site-url', 'not a url'])
    t.equal(r.code, 1)
    t.match(r.stderr, 'baseplane: Site URL must not contain spaces')
    r = await cli(url, ['auth', 'redirects', ref])
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'site URL              https://shop.example.test\nallowed redirects     http://localhost:5173/**, myapp://callback', 'without options, the list')
    r = await cli(url, ['auth', 'redirects', ref, '--replace'])
    t.equal(r.code, 2)
    t.match(r.stderr, '--replace goes with --allow URL ...')
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-tmpl-'))
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
    fs.writeFileSync(path.join(dir, 'good.html'), '<a href="{{ .ConfirmationURL }}">Reset</a>')
    fs.writeFileSync(path.join(dir, 'bad.html'), '<p>{{ .Token }}</p>')
    r = await cli(url, ['auth', 'template', ref, 'recovery', '--subject', 'Reset it', '--file', path.join(dir, 'good.html')])
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, `Saved the recovery template of ${ref}`)
    r = await cli(url, ['auth', 'template', ref, 'recovery', '--subject', 'Reset it', '--file', path.join(dir, 'bad.html')])
    t.equal(r.code, 1)
    t.match(r.stderr, 'must contain {{ .ConfirmationURL }}')
    r = await cli(url, ['auth', 'template', ref, 'welcome', '--subject', 'x', '--file', path.join(dir, 'good.html')])
    t.equal(r.code, 1)
    t.match(r.stderr, 'unknown template kind "welcome": use one of confirmation, recovery, magic_link, invite, email_change, reauthentication')
    r = await cli(url, ['auth', 'templates', ref])
    t.match(r.stdout, /recovery\s+custom\s+Reset it/)
    r = await cli(url, ['auth', 'template', ref, 'recovery', 'restore'])
    t.equal(r.code, 2)
    t.match(r.stderr, 'unexpected argument "restore": the only action is reset')
    r = await cli(url, ['auth', 'template', ref, 'recovery', 'reset'])
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'Reset the recovery template')
    r = await cli(url, ['auth', 'settings', ref, '--mail-per-hour', '12', '--json'])
    t.equal(JSON.parse(r.stdout).mail_per_hour, 12)
    r = await cli(url, ['auth', 'settings', ref, '--mail-per-hour', 'lots'])
    t.equal(r.code, 1)
    t.match(r.stderr, '--mail-per-hour must be a whole number from 0 to 1000000, got "lots"')
    void run
  })
})

t.test('without SMTP_URL mail goes to the outbox, listed by `baseplane mail list`', async (t) => {
  const test = await startTestPlatform(t)
  const project = await test.createProject({ auth: true })
  const r = await fetch(`${project.baseUrl}/auth/v1/signup`, {
    method: 'POST',
    headers: { apikey: project.anonKey, 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'outbox@example.test', password: 'outbox pw' }),
  })
  t.equal(r.status, 200)
  const mails = await listMail(test.platform.controlPlane, project.ref)
  t.equal(mails.length, 1)
  t.match(mails[0], { kind: 'confirmation', to: 'outbox@example.test', subject: 'Confirm Your Email', delivery: 'outbox' })
  t.match(mails[0]!.html, `${project.baseUrl}/auth/v1/verify?token=`)
  t.match(mails[0]!.html, 'http://localhost:3000', 'the default site URL')
  const listed = await cli(test.catalogueUrl, ['mail', 'list', project.ref])
  t.equal(listed.code, 0, listed.stderr)
  t.match(listed.stdout, /#1 .* confirmation to outbox@example\.test \(outbox\)\nSubject: Confirm Your Email/)
})
