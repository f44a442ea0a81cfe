// Auth's settings table (workers/auth/settings-table.ts, issue 37 item 6): each
// setting declared once, and what is made from it agrees with it. The
// defaults it declares are the ones in effect for a project that set nothing
// (the WebAuthn switches included, whose effective value webauthn-settings.ts
// derives); every declared setting is in the admin API's view; flags and
// names are unique; a value its check refuses falls back to the default; the
// whole-settings check names the setting of each problem.
import t from 'tap'
import { AUTH_OPTIONS, optionProblems, withoutCleared } from '../../workers/auth/settings-table.ts'
import { applyDefaults, optionsView, settingsRefusals } from '../../workers/auth/settings.ts'

t.test('the defaults the table declares are the ones in effect', async (t) => {
  const view = optionsView({}) as Record<string, unknown>
  for (const option of AUTH_OPTIONS) {
    if (option.type === 'integer' || option.type === 'switch') t.equal(view[option.name], option.default, option.name)
    else if (option.type === 'secret') t.equal(view[option.countShownAs], 0, option.name)
    else if (option.type === 'hook') t.equal(view[option.name], null, option.name)
    else t.ok(view[option.name], `${option.name}: derived (${option.defaultIs})`)
  }
})

t.test('every setting is in the view, once; flags and names are unique', async (t) => {
  const view = optionsView({})
  const shown = AUTH_OPTIONS.map((option) => (option.type === 'secret' ? option.countShownAs : option.name))
  t.same([...shown].sort(), Object.keys(view).sort(), 'the view shows the table, and nothing else')
  const flags = AUTH_OPTIONS.flatMap((option) => ('flag' in option.cli ? [option.cli.flag] : [option.cli.on, option.cli.off]))
  t.equal(new Set(flags).size, flags.length, 'no flag twice')
  t.equal(new Set(AUTH_OPTIONS.map((option) => option.name)).size, AUTH_OPTIONS.length, 'no name twice')
})

t.test("each type's check, and a refused stored value falls back to the default", async (t) => {
  t.same(optionProblems(AUTH_OPTIONS.find((o) => o.name === 'otp_expiry_seconds')!, 59), ['otp_expiry_seconds must be a whole number from 60 to 86400'])
  t.same(optionProblems(AUTH_OPTIONS.find((o) => o.name === 'mailer_autoconfirm')!, 'yes'), ['mailer_autoconfirm must be true or false'])
  t.same(optionProblems(AUTH_OPTIONS.find((o) => o.name === 'webauthn_rp_origins')!, null), [], 'null: back to the default')
  t.same(optionProblems(AUTH_OPTIONS.find((o) => o.name === 'hook_send_email_uri')!, ''), [], '"": no hook')
  t.equal(applyDefaults({ otp_expiry_seconds: 59, mailer_autoconfirm: 'yes' }).otpExpirySeconds, 3600)
  t.equal(applyDefaults({ mailer_autoconfirm: 'yes' }).mailerAutoconfirm, false)
  t.equal(applyDefaults({ mailer_secure_email_change_enabled: 'no' }).secureEmailChange, true, 'a default that is on stays on')
  t.same(withoutCleared({ webauthn_rp_id: null, hook_send_email_uri: '', mail_per_hour: 5 }), { mail_per_hour: 5 })
})

t.test('the whole check names the setting of every problem', async (t) => {
  const problems = settingsRefusals({
    mail_per_hour: -1,
    disable_signup: 'no',
    webauthn_rp_id: 'shop.example.test',
    webauthn_rp_origins: ['https://elsewhere.example.test'],
    hook_send_email_uri: 'https://mail.example.test/hook',
  })
  t.same(
    problems.map((problem) => problem.field),
    ['mail_per_hour', 'disable_signup', 'webauthn_rp_origins', 'hook_send_email_uri'],
  )
  t.match(problems[2]!.message, 'is not on shop.example.test (the webauthn_rp_id)')
  t.match(problems[3]!.message, 'set hook_send_email_secrets too')
})
