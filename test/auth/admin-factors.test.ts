// Admin MFA endpoints (issue 15 item 4): support staff list a user's factors
// and remove a lost TOTP device with supabase-js's auth.admin.mfa, in
// GoTrue's shapes; the sessions the factor raised drop back to aal1; the
// user signs in and enrols a new device without the old one; refusals.
import crypto from 'node:crypto'
import { decodeJwt } from 'jose'
import { generateSync } from 'otplib'
import t from 'tap'
import { authFixture, call, projectSql, signedIn } from './helpers.ts'

const totp = (secret: string) => generateSync({ secret, epoch: Math.floor(Date.now() / 1000) })

t.test('auth.admin.mfa.listFactors and deleteFactor', async (t) => {
  const f = await authFixture(t)
  const admin = f.admin().auth.admin
  const ada = await signedIn(f, 'ada@example.test')

  // Ada enrols her phone and verifies it (aal2), then starts a second enrolment she never finishes.
  const phone = await ada.client.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'Ada phone' })
  t.error(phone.error)
  const verified = await ada.client.auth.mfa.challengeAndVerify({ factorId: phone.data!.id, code: totp(phone.data!.totp.secret) })
  t.error(verified.error)
  t.equal((await ada.client.auth.mfa.getAuthenticatorAssuranceLevel()).data?.currentLevel, 'aal2')
  const tablet = await ada.client.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'Ada tablet' })
  t.error(tablet.error)

  await t.test('listFactors: every factor of the user, verified or not, never a secret', async (t) => {
    const listed = await admin.mfa.listFactors({ userId: ada.id })
    t.error(listed.error)
    t.match(listed.data?.factors, [
      { id: phone.data!.id, status: 'verified', factor_type: 'totp', friendly_name: 'Ada phone', phone: '', created_at: String, updated_at: String, last_challenged_at: String },
      { id: tablet.data!.id, status: 'unverified', factor_type: 'totp', friendly_name: 'Ada tablet', last_challenged_at: null },
    ])
    t.equal(listed.data?.factors.length, 2)
    t.notOk(JSON.stringify(listed.data).includes(phone.data!.totp.secret), 'no secret')
    const raw = await call(f, 'GET', `/admin/users/${ada.id}/factors`, undefined, { key: f.project.serviceRoleKey })
    t.equal(raw.status, 200)
    t.ok(Array.isArray(raw.body), 'GoTrue answers a bare array')
    const none = await admin.mfa.listFactors({ userId: (await signedIn(f, 'nofactor@example.test')).id })
    t.error(none.error)
    t.same(none.data?.factors, [], 'a user without factors: an empty list')
  })

  await t.test('deleteFactor answers the deleted factor and ends its aal2', async (t) => {
    const deleted = await admin.mfa.deleteFactor({ userId: ada.id, id: phone.data!.id })
    t.error(deleted.error)
    // auth-js hands back _request's own {data, error} as `data`: the answer's body is one level down.
    t.match(deleted.data, { data: { id: phone.data!.id, status: 'verified', factor_type: 'totp', friendly_name: 'Ada phone' } })
    const listed = await admin.mfa.listFactors({ userId: ada.id })
    t.error(listed.error)
    t.same(listed.data?.factors.map((x) => x.id), [tablet.data!.id], 'only the other factor is left')

    // Her aal2 session is aal1 again: Auth sees it at once, and a refresh issues aal1 tokens.
    const refreshed = await ada.client.auth.refreshSession()
    t.error(refreshed.error)
    const claims = decodeJwt(refreshed.data.session!.access_token)
    t.equal(claims.aal, 'aal1')
    t.same((claims.amr as Array<{ method: string }>).map((a) => a.method), ['password'], 'totp is gone from amr')
    const level = await ada.client.auth.mfa.getAuthenticatorAssuranceLevel()
    t.same([level.data?.currentLevel, level.data?.nextLevel], ['aal1', 'aal1'], 'no second factor is due any more')
    const { rows } = await projectSql(f, `select count(*)::int as n from auth.sessions where user_id = $1 and (aal <> 'aal1' or factor_id is not null)`, [ada.id])
    t.equal(rows[0].n, 0)
    const audited = await projectSql(f, `select payload->'traits'->>'factor_id' as factor from auth.audit_log_entries where payload->>'action' = 'factor_deleted'`)
    t.same(audited.rows, [{ factor: phone.data!.id }], 'audited')

    // Without the lost device she signs in with her password and enrols a new one at aal1.
    const again = f.anon()
    t.error((await again.auth.signInWithPassword({ email: 'ada@example.test', password: 'password 123' })).error)
    const fresh = await again.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'Ada new phone' })
    t.error(fresh.error, 'no verified factor left, so no aal2 is needed to enrol')
    t.error((await again.auth.mfa.challengeAndVerify({ factorId: fresh.data!.id, code: totp(fresh.data!.totp.secret) })).error)
  })

  await t.test('refusals in GoTrue shapes', async (t) => {
    const bob = await signedIn(f, 'bob@example.test')
    const bobFactor = await bob.client.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'Bob phone' })
    t.error(bobFactor.error)
    const service = { key: f.project.serviceRoleKey }

    const stranger = crypto.randomUUID()
    const unknownUser = await admin.mfa.listFactors({ userId: stranger })
    t.equal(unknownUser.error?.status, 404)
    t.equal(unknownUser.error?.code, 'user_not_found')
    t.equal(unknownUser.error?.message, 'User not found')
    const unknownUserDelete = await admin.mfa.deleteFactor({ userId: stranger, id: bobFactor.data!.id })
    t.equal(unknownUserDelete.error?.code, 'user_not_found')

    const otherUsersFactor = await admin.mfa.deleteFactor({ userId: ada.id, id: bobFactor.data!.id })
    t.equal(otherUsersFactor.error?.status, 404)
    t.equal(otherUsersFactor.error?.code, 'mfa_factor_not_found', "another user's factor is not found")
    t.equal(otherUsersFactor.error?.message, 'Factor not found')
    const gone = await admin.mfa.deleteFactor({ userId: ada.id, id: phone.data!.id })
    t.equal(gone.error?.code, 'mfa_factor_not_found', 'a deleted factor is not found again')
    t.equal((await admin.mfa.listFactors({ userId: bob.id })).data?.factors.length, 1, "Bob's factor stays")

    let r = await call(f, 'GET', '/admin/users/not-a-uuid/factors', undefined, service)
    t.same([r.status, r.body.code, r.body.message], [404, 'validation_failed', 'user_id must be an UUID'])
    r = await call(f, 'DELETE', `/admin/users/${bob.id}/factors/not-a-uuid`, undefined, service)
    t.same([r.status, r.body.code, r.body.message], [404, 'validation_failed', 'factor_id must be an UUID'])
    r = await call(f, 'PATCH', `/admin/users/${bob.id}/factors`, undefined, service)
    t.same([r.status, r.body.code], [404, 'not_found'], 'another method: 404 as GoTrue')

    // Only service_role: the anon key, and a user's own token, are refused.
    r = await call(f, 'GET', `/admin/users/${bob.id}/factors`)
    t.same([r.status, r.body.code, r.body.message], [403, 'not_admin', 'User not allowed'])
    const bobToken = (await bob.client.auth.getSession()).data.session!.access_token
    r = await call(f, 'DELETE', `/admin/users/${bob.id}/factors/${bobFactor.data!.id}`, undefined, { token: bobToken })
    t.same([r.status, r.body.code], [403, 'not_admin'])
    t.equal((await admin.mfa.listFactors({ userId: bob.id })).data?.factors.length, 1, 'nothing was deleted')
  })
})
