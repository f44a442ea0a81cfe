// What running auth-js's own test suite (2.119.1, against Baseplane projects
// standing in for its docker GoTrue instances; issue 25) found answering
// otherwise than GoTrue does with the same features off:
// - POST /resend with a phone type: GoTrue's ResendConfirmationParams.Validate
//   checks in its order, and with the phone provider off refuses a number with
//   400 phone_provider_disabled "Phone logins are disabled";
// - the admin API's OAuth client registry (auth-js admin.oauth.*): GoTrue's
//   admin group, then 404 feature_disabled "OAuth server is disabled", where
//   Baseplane answered a bare 404 not_found.
import t, { type Test } from 'tap'
import { authFixture, call } from './helpers.ts'

type Result = { error: { status?: number; code?: string; message: string } | null }

function refused(t: Test, label: string, result: Result, status: number, code: string, message: string) {
  t.same([result.error?.status, result.error?.code, result.error?.message], [status, code, message], label)
}

t.test('auth-js suite findings', async (t) => {
  const f = await authFixture(t)

  await t.test('POST /resend checks in GoTrue\'s order, the phone provider off', async (t) => {
    const supabase = f.anon()
    // The auth-js suite's "resend with phone": GoTrue with phones off answers this, not "Unsupported phone provider".
    refused(t, 'resend phone_change by phone', await supabase.auth.resend({ type: 'phone_change', phone: '15555550100' }), 400, 'phone_provider_disabled', 'Phone logins are disabled')
    refused(t, 'resend sms by phone', await supabase.auth.resend({ type: 'sms', phone: '+15555550100' }), 400, 'phone_provider_disabled', 'Phone logins are disabled')
    const cases: Array<[string, Record<string, unknown>, number, string, string]> = [
      ['sms without a phone', { type: 'sms', email: 'erin@example.test' }, 400, 'validation_failed', 'Type provided requires a phone number'],
      ['signup without an email', { type: 'signup', phone: '+15555550100' }, 400, 'validation_failed', 'Type provided requires an email address'],
      ['both an email and a phone', { type: 'signup', email: 'erin@example.test', phone: '+15555550100' }, 400, 'validation_failed', 'Only an email address or phone number should be provided.'],
      ['email_change by phone', { type: 'email_change', phone: '+15555550100' }, 400, 'phone_provider_disabled', 'Phone logins are disabled'],
      ['neither', { type: 'email_change' }, 400, 'validation_failed', 'Missing email address or phone number'],
      ['phone_change by a malformed email', { type: 'phone_change', email: 'erin' }, 400, 'validation_failed', 'Unable to validate email address: invalid format'],
    ]
    for (const [label, body, status, code, message] of cases) {
      const r = await call(f, 'POST', '/resend', body)
      t.same([r.status, r.body.code, r.body.message], [status, code, message], label)
    }
    // By email: no user has a phone change pending, so GoTrue answers {} as for an unknown user, and mails nothing.
    t.error((await f.admin().auth.admin.createUser({ email: 'erin@example.test', password: 'erin password', email_confirm: true })).error)
    const before = f.mail.messages.length
    const byEmail = await call(f, 'POST', '/resend', { type: 'phone_change', email: 'erin@example.test' })
    t.same([byEmail.status, byEmail.body], [200, {}], 'phone_change by email')
    t.equal(f.mail.messages.length, before, 'nothing mailed')
  })

  await t.test('admin.oauth.*: admin credentials, then "OAuth server is disabled"', async (t) => {
    const oauth = f.admin().auth.admin.oauth
    const clientId = '00000000-0000-0000-0000-000000000000'
    const disabled = (label: string, result: Result) => refused(t, label, result, 404, 'feature_disabled', 'OAuth server is disabled')
    disabled('createClient', await oauth.createClient({ client_name: 'App', redirect_uris: ['https://app.example.test/cb'] }))
    disabled('listClients', (await oauth.listClients()) as Result)
    disabled('getClient', await oauth.getClient(clientId))
    disabled('updateClient', await oauth.updateClient(clientId, { client_name: 'Renamed' }))
    disabled('deleteClient', (await oauth.deleteClient(clientId)) as Result)
    disabled('regenerateClientSecret', await oauth.regenerateClientSecret(clientId))
    // GoTrue's admin group checks the caller before the switch.
    const anon = await call(f, 'POST', '/admin/oauth/clients', { client_name: 'App', redirect_uris: ['https://app.example.test/cb'] })
    t.same([anon.status, anon.body.code, anon.body.message], [403, 'not_admin', 'User not allowed'], 'not an admin')
  })
})
