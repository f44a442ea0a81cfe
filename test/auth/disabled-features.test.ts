// Features Baseplane's Auth does not offer answer GoTrue's "disabled" errors
// (issue 15 item 5), each through the supabase-js call an app would make:
// anonymous sign-in, phone and SMS, SAML/SSO, web3, manual identity linking,
// phone and WebAuthn factors, passkeys, MFA recovery codes; and GET /settings
// says each is off.
import { createClient, type SupabaseClient } from '@supabase/supabase-js'
import { generateSync } from 'otplib'
import t, { type Test } from 'tap'
import { authFixture, call, type AuthFixture } from './helpers.ts'

type Result = { error: { status?: number; code?: string; message: string } | null }

function refused(t: Test, label: string, result: Result, status: number, code: string, message: string) {
  t.same([result.error?.status, result.error?.code, result.error?.message], [status, code, message], label)
}

/** An app's client. auth-js 2.119 asks no flag for passkeys; recovery codes are still behind one. */
function client(f: AuthFixture): SupabaseClient {
  return createClient(f.project.baseUrl, f.project.anonKey, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false, experimental: { recoveryCodes: true } },
  })
}

t.test('features not offered', async (t) => {
  const f = await authFixture(t)
  const admin = f.admin()
  t.error((await admin.auth.admin.createUser({ email: 'dana@example.test', password: 'dana password', email_confirm: true })).error)
  const dana = client(f)
  const signedIn = await dana.auth.signInWithPassword({ email: 'dana@example.test', password: 'dana password' })
  t.error(signedIn.error)
  const token = signedIn.data.session!.access_token

  await t.test('anonymous sign-in', async (t) => {
    refused(t, 'signInAnonymously', await f.anon().auth.signInAnonymously(), 422, 'anonymous_provider_disabled', 'Anonymous sign-ins are disabled')
    refused(t, 'with data', await f.anon().auth.signInAnonymously({ options: { data: { plan: 'x' } } }), 422, 'anonymous_provider_disabled', 'Anonymous sign-ins are disabled')
  })

  await t.test('phone and SMS', async (t) => {
    const supabase = f.anon()
    refused(t, 'signUp({phone})', await supabase.auth.signUp({ phone: '+15555550100', password: 'phone password' }), 400, 'phone_provider_disabled', 'Phone signups are disabled')
    refused(t, 'signInWithOtp({phone})', await supabase.auth.signInWithOtp({ phone: '+15555550100' }), 400, 'phone_provider_disabled', 'Unsupported phone provider')
    refused(t, 'signInWithPassword({phone})', await supabase.auth.signInWithPassword({ phone: '+15555550100', password: 'phone password' }), 422, 'phone_provider_disabled', 'Phone logins are disabled')
    refused(t, 'verifyOtp sms', await supabase.auth.verifyOtp({ phone: '+15555550100', token: '123456', type: 'sms' }), 403, 'otp_expired', 'Token has expired or is invalid')
    refused(t, 'verifyOtp phone_change', await supabase.auth.verifyOtp({ phone: '15555550100', token: '123456', type: 'phone_change' }), 403, 'otp_expired', 'Token has expired or is invalid')
    refused(t, 'verifyOtp sms with a malformed number', await supabase.auth.verifyOtp({ phone: '+0123', token: '123456', type: 'sms' }), 400, 'validation_failed', 'Invalid phone number format (E.164 required)')
    refused(t, 'verifyOtp sms by token hash', await supabase.auth.verifyOtp({ token_hash: 'abc', type: 'sms' } as never), 403, 'otp_expired', 'Token has expired or is invalid')
    const resend = await supabase.auth.resend({ type: 'sms', phone: '+15555550100' })
    t.same([resend.error?.status, resend.error?.code], [400, 'phone_provider_disabled'], 'resend sms')
  })

  await t.test('SAML single sign-on', async (t) => {
    refused(t, 'signInWithSSO({domain})', await f.anon().auth.signInWithSSO({ domain: 'example.test' }), 404, 'saml_provider_disabled', 'SAML 2.0 is disabled')
    refused(t, 'signInWithSSO({providerId})', await f.anon().auth.signInWithSSO({ providerId: '21648a9d-8d5a-4555-a9d1-d6375dc14e92' }), 404, 'saml_provider_disabled', 'SAML 2.0 is disabled')
    // The identity provider reaches these without an apikey.
    for (const [method, path] of [['GET', '/sso/saml/metadata'], ['POST', '/sso/saml/acs']] as const) {
      const r = await fetch(f.url(path), { method, headers: { 'x-supabase-api-version': '2024-01-01' } })
      t.equal(r.status, 404, path)
      t.same(await r.json(), { code: 'saml_provider_disabled', message: 'SAML 2.0 is disabled' })
    }
  })

  await t.test('web3', async (t) => {
    const ethereum = await f.anon().auth.signInWithWeb3({ chain: 'ethereum', message: 'example.test wants you to sign in with your Ethereum account', signature: `0x${'ab'.repeat(65)}` })
    refused(t, 'signInWithWeb3 ethereum', ethereum, 422, 'web3_provider_disabled', 'Web3 provider is disabled')
    const solana = await f.anon().auth.signInWithWeb3({ chain: 'solana', message: 'example.test wants you to sign in with your Solana account', signature: new Uint8Array(64) })
    refused(t, 'signInWithWeb3 solana', solana, 422, 'web3_provider_disabled', 'Web3 provider is disabled')
  })

  await t.test('manual identity linking', async (t) => {
    const link = await dana.auth.linkIdentity({ provider: 'google', options: { skipBrowserRedirect: true } })
    refused(t, 'linkIdentity (OAuth)', link, 404, 'manual_linking_disabled', 'Manual linking is disabled')
    const byToken = await dana.auth.linkIdentity({ provider: 'google', token: 'eyJhbGciOiJSUzI1NiJ9.e30.c2ln' })
    // GoTrue does not gate the ID token path on the switch (linking.test.ts); Google is not set up here.
    refused(t, 'linkIdentity (ID token)', byToken, 400, 'provider_disabled', 'Provider (issuer "https://accounts.google.com") is not enabled')
    const identities = await dana.auth.getUserIdentities()
    t.error(identities.error)
    const unlink = await dana.auth.unlinkIdentity(identities.data!.identities[0]!)
    refused(t, 'unlinkIdentity', unlink, 404, 'manual_linking_disabled', 'Manual linking is disabled')
    const noToken = await call(f, 'GET', '/user/identities/authorize?provider=google')
    t.same([noToken.status, noToken.body.code], [401, 'no_authorization'], 'authentication is checked first')
  })

  await t.test('phone and WebAuthn factors, passkeys', async (t) => {
    refused(t, 'mfa.enroll phone', await dana.auth.mfa.enroll({ factorType: 'phone', phone: '+15555550100' }), 422, 'mfa_phone_enroll_not_enabled', 'MFA enroll is disabled for Phone')
    refused(t, 'mfa.enroll webauthn', await dana.auth.mfa.enroll({ factorType: 'webauthn' } as never), 422, 'mfa_webauthn_enroll_not_enabled', 'MFA enroll is disabled for WebAuthn')
    refused(t, 'passkey.startAuthentication', (await dana.auth.passkey.startAuthentication()) as Result, 404, 'passkey_disabled', 'Passkeys are disabled')
    refused(t, 'passkey.list', (await dana.auth.passkey.list()) as Result, 404, 'passkey_disabled', 'Passkeys are disabled')
    const register = await call(f, 'POST', '/passkeys/registration/options', {}, { token })
    t.same([register.status, register.body.code], [404, 'passkey_disabled'])
  })

  await t.test('MFA recovery codes: GoTrue with them switched off', async (t) => {
    const codes = dana.auth.mfa.recoveryCodes
    refused(t, 'getStatus', await codes.getStatus(), 404, 'mfa_factor_not_found', 'The user has not enrolled recovery codes')
    refused(t, 'generate', await codes.generate({ friendlyName: 'Backup codes' }), 422, 'mfa_recovery_codes_enroll_not_enabled', 'MFA enroll is disabled for recovery codes')
    refused(t, 'regenerate', await codes.regenerate(), 422, 'mfa_recovery_codes_enroll_not_enabled', 'MFA enroll is disabled for recovery codes')
    refused(t, 'verify', await codes.verify({ code: 'K4M9-X7QP-2AB8-HT3Z' }), 422, 'mfa_recovery_codes_verify_not_enabled', 'MFA verification is disabled for recovery codes')
    refused(t, 'unenroll at aal1', await codes.unenroll(), 403, 'insufficient_aal', 'AAL2 required to delete recovery codes')
    const noToken = await call(f, 'POST', '/factors/recovery-codes')
    t.same([noToken.status, noToken.body.code], [401, 'no_authorization'], 'authentication is checked first')

    // At aal2 (a TOTP factor verified): the switch still comes first; there are no codes to remove.
    const enrolled = await call(f, 'POST', '/factors', { factor_type: 'totp', friendly_name: 'phone' }, { token })
    const challenge = await call(f, 'POST', `/factors/${enrolled.body.id}/challenge`, undefined, { token })
    const verified = await call(f, 'POST', `/factors/${enrolled.body.id}/verify`, { challenge_id: challenge.body.id, code: generateSync({ secret: enrolled.body.totp.secret }) }, { token })
    t.equal(verified.status, 200)
    const aal2 = client(f)
    t.error((await aal2.auth.setSession({ access_token: verified.body.access_token, refresh_token: verified.body.refresh_token })).error)
    refused(t, 'generate at aal2', await aal2.auth.mfa.recoveryCodes.generate(), 422, 'mfa_recovery_codes_enroll_not_enabled', 'MFA enroll is disabled for recovery codes')
    refused(t, 'unenroll at aal2', await aal2.auth.mfa.recoveryCodes.unenroll(), 404, 'mfa_factor_not_found', 'The user has not enrolled recovery codes')
    const factors = await aal2.auth.mfa.listFactors()
    t.same([factors.data?.totp.length, factors.data?.recovery_code.length], [1, 0], 'listFactors has a recovery_code bucket, empty')
  })

  await t.test('Auth as an OAuth server', async (t) => {
    const grants = await call(f, 'GET', '/user/oauth/grants', undefined, { token })
    t.same([grants.status, grants.body.code, grants.body.message], [404, 'feature_disabled', 'OAuth server is disabled'])
    const consent = await call(f, 'POST', '/oauth/authorizations/abc/consent', { action: 'approve' }, { token })
    t.same([consent.status, consent.body.code], [404, 'feature_disabled'])
  })

  await t.test('GET /settings says each is off, in GoTrue\'s shape', async (t) => {
    const s = await call<Record<string, unknown> & { external: Record<string, boolean> }>(f, 'GET', '/settings')
    t.equal(s.status, 200)
    t.same(Object.keys(s.body), ['external', 'disable_signup', 'mailer_autoconfirm', 'phone_autoconfirm', 'sms_provider', 'saml_enabled', 'saml_private_key_next_configured', 'passkeys_enabled'])
    t.match(s.body, { phone_autoconfirm: false, sms_provider: '', saml_enabled: false, saml_private_key_next_configured: false, passkeys_enabled: false })
    t.equal(Object.keys(s.body.external).length, 26)
    for (const [name, on] of Object.entries(s.body.external)) t.equal(on, name === 'email', `external.${name}`)
  })

  t.ok(token)
})
