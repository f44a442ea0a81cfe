// Auth hooks (issue 25 item 4; reference/gotrue-round3.md §4) through the
// unmodified supabase-js: the custom access token hook (a function in the
// project database, granted as Supabase's docs say to supabase_auth_admin)
// adds a claim at sign-in and refresh that auth.jwt() sees in an RLS policy;
// its bad answers, refusals, failures and timeouts refuse the issue and
// leave nothing written. The send email hook: an HTTP endpoint on 127.0.0.1
// gets the sign-up mail signed with Standard Webhooks; a database function
// gets it too; a failing hook fails the sign-up and leaves no user. Settings
// through the admin API and the CLI.
import crypto from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import pg from 'pg'
import t from 'tap'
import { setAuthOptions } from '../../control-plane/auth-settings.ts'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { verifyJwt } from '../../lib/jwt.ts'
import { runCli } from '../helpers/cli.ts'
import { adminQuery, serverUrl, withDatabase } from '../helpers/db.ts'
import { authFixture, type AuthFixture, authSettingsApi, call } from './helpers.ts'

const HOOK = 'pg-functions://postgres/public/custom_access_token_hook'
const SECRET_BYTES = crypto.randomBytes(32)
const SECRET = `v1,whsec_${SECRET_BYTES.toString('base64')}`

/** Replaces the project's hook function with `body` (plpgsql returning jsonb, the event in `event`), granted as Supabase's docs say. */
async function hookFunction(owner: pg.Client, name: string, body: string): Promise<void> {
  await owner.query(`create or replace function public.${name}(event jsonb) returns jsonb language plpgsql as $$ ${body} $$;
    grant usage on schema public to supabase_auth_admin;
    grant execute on function public.${name} to supabase_auth_admin;
    revoke execute on function public.${name} from authenticated, anon, public;`)
}

interface Received {
  headers: http.IncomingHttpHeaders
  body: string
}

/** An HTTP receiver on 127.0.0.1 answering `answer` (status, JSON body). */
async function receiver(t: { teardown(fn: () => unknown): void }, answer: () => [number, unknown]) {
  const received: Received[] = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      received.push({ headers: req.headers, body })
      const [status, json] = answer()
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received }
}

t.test('auth hooks', async (t) => {
  const f: AuthFixture = await authFixture(t)
  const cp = f.test.platform.controlPlane
  const ref = f.project.ref
  const db = withDatabase(await serverUrl(), f.project.record.dbName)
  const owner = new pg.Client({ connectionString: ownerUrlOf(f.project.record) })
  await owner.connect()
  t.teardown(() => owner.end())
  t.error((await f.admin().auth.admin.createUser({ email: 'gold@example.test', password: 'gold password', email_confirm: true })).error)
  const sessions = async () => Number((await adminQuery<{ n: string }>(db, `select count(*) as n from auth.sessions s join auth.users u on u.id = s.user_id where u.email = 'gold@example.test'`)).rows[0]!.n)
  const signIn = () => f.anon().auth.signInWithPassword({ email: 'gold@example.test', password: 'gold password' })

  await t.test('settings: admin API and CLI, validated, the secret write-only', async (t) => {
    const api = authSettingsApi(f)
    t.match((await api('GET')).body, { hook_custom_access_token_uri: null, hook_send_email_uri: null, hook_send_email_secrets_set: 0 })
    t.match(await api('PATCH', { hook_custom_access_token_uri: 'pg-functions://postgres/public' }), { status: 400, body: { message: /hook_custom_access_token_uri must look like pg-functions:\/\/postgres\/<schema>\/<function>/ } })
    t.match(await api('PATCH', { hook_send_email_uri: 'http://mail.example.test/hook', hook_send_email_secrets: SECRET }), { status: 400, body: { message: /may use http:\/\/ only for localhost or 127.0.0.1/ } })
    t.match(await api('PATCH', { hook_send_email_uri: 'https://mail.example.test/hook' }), { status: 400, body: { message: /set hook_send_email_secrets too/ } })
    t.match(await api('PATCH', { hook_send_email_uri: 'https://mail.example.test/hook', hook_send_email_secrets: 'whsec_abc' }), { status: 400, body: { message: /Standard Webhooks secrets/ } })
    const set = await api('PATCH', { hook_send_email_uri: 'https://mail.example.test/hook', hook_send_email_secrets: `${SECRET}|${SECRET}` })
    t.match(set, { status: 200, body: { hook_send_email_uri: 'https://mail.example.test/hook', hook_send_email_secrets_set: 2 } })
    t.notOk(JSON.stringify(set.body).includes(SECRET_BYTES.toString('base64')), 'the secret is not shown back')

    const env = { DATABASE_URL: f.test.catalogueUrl }
    let r = await runCli(['auth', 'settings', ref, '--send-email-hook', '', '--send-email-hook-secret', ''], env)
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'send email hook       (none: Auth sends the mail)')
    r = await runCli(['auth', 'settings', ref, '--access-token-hook', 'https://example.test/hook'], env)
    t.equal(r.code, 1)
    t.match(r.stderr, '--access-token-hook must look like pg-functions://postgres/<schema>/<function>')
    r = await runCli(['auth', 'settings', ref, '--send-email-hook', 'https://mail.example.test/hook', '--send-email-hook-secret', '-'], env, `${SECRET}\n`)
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, 'send email hook       https://mail.example.test/hook (1 signing secret)')
    t.notOk(r.stdout.includes(SECRET_BYTES.toString('base64')))
    r = await runCli(['auth', 'settings', ref, '--access-token-hook', HOOK, '--send-email-hook', ''], env)
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, `access token hook     ${HOOK}`)
    await setAuthOptions(cp, ref, { hook_custom_access_token_uri: null })
  })

  await t.test('a claim added by the hook, at sign-in and refresh, seen by an RLS policy', async (t) => {
    await hookFunction(owner, 'custom_access_token_hook', `
      begin
        return jsonb_build_object('claims', (event->'claims') || jsonb_build_object('user_level', 'gold', 'via', event->>'authentication_method'));
      end`)
    await owner.query(`create table public.gold_notes (id serial primary key, body text not null);
      alter table public.gold_notes enable row level security;
      create policy gold_only on public.gold_notes for select to authenticated using (auth.jwt() ->> 'user_level' = 'gold');
      grant select on public.gold_notes to authenticated;
      insert into public.gold_notes (body) values ('for gold members');`)
    await setAuthOptions(cp, ref, { hook_custom_access_token_uri: HOOK })
    const { data, error } = await signIn()
    t.error(error)
    const claims = await verifyJwt(f.project.record, data.session!.access_token)
    t.match(claims, { user_level: 'gold', via: 'password', email: 'gold@example.test', role: 'authenticated', aal: 'aal1' })
    const supabase = f.anon()
    await supabase.auth.setSession({ access_token: data.session!.access_token, refresh_token: data.session!.refresh_token })
    const refreshed = await supabase.auth.refreshSession()
    t.error(refreshed.error)
    t.match(await verifyJwt(f.project.record, refreshed.data.session!.access_token), { user_level: 'gold', via: 'token_refresh' })

    const notes = async (token: string) => {
      const response = await fetch(`${f.project.baseUrl}/graphql/v1`, {
        method: 'POST',
        headers: { apikey: f.project.anonKey, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ gold_notesCollection { edges { node { body } } } }' }),
      })
      return (await response.json()) as unknown
    }
    t.same(await notes(refreshed.data.session!.access_token), { data: { gold_notesCollection: { edges: [{ node: { body: 'for gold members' } }] } } })
    await setAuthOptions(cp, ref, { hook_custom_access_token_uri: null })
    const plain = await signIn()
    t.notOk('user_level' in (await verifyJwt(f.project.record, plain.data.session!.access_token)), 'without the hook, no claim')
    t.same(await notes(plain.data.session!.access_token), { data: { gold_notesCollection: { edges: [] } } }, 'and the policy hides the row')
  })

  await t.test('bad answers, refusals, failures and timeouts refuse the issue and write nothing', async (t) => {
    const before = await sessions()
    const refused = async (body: string, expected: [number, string, RegExp | string]) => {
      await hookFunction(owner, 'custom_access_token_hook', body)
      await setAuthOptions(cp, ref, { hook_custom_access_token_uri: HOOK })
      const { data, error } = await signIn()
      t.equal(data.session, null)
      t.match([error?.status, error?.message], [expected[0], expected[2]], 'supabase-js (no code for 5xx answers)')
      const raw = await call(f, 'POST', '/token?grant_type=password', { email: 'gold@example.test', password: 'gold password' })
      t.match([raw.status, raw.body.code, raw.body.message], expected)
      t.equal(await sessions(), before, 'no session left behind')
    }
    await refused(`begin return jsonb_build_object('claims', (event->'claims') - 'session_id'); end`, [502, 'hook_custom_access_token_invalid_output', 'output claims do not conform to the expected schema: session_id is required'])
    await refused(`begin return jsonb_build_object('claims', (event->'claims') || '{"exp": "tomorrow"}'); end`, [502, 'hook_custom_access_token_invalid_output', /exp: invalid type, expected integer/])
    await refused(`begin return '{}'::jsonb; end`, [502, 'hook_custom_access_token_invalid_output', 'output claims field is missing'])
    await refused(`begin return '{"error": {"http_code": 403, "message": "Gold members only"}}'::jsonb; end`, [403, 'hook_custom_access_token_error', 'Gold members only'])
    await refused(`begin raise exception 'broken hook'; end`, [502, 'hook_custom_access_token_failed', `Error running hook URI: ${HOOK}`])
    await refused(`begin perform pg_sleep(3); return jsonb_build_object('claims', event->'claims'); end`, [504, 'hook_custom_access_token_timeout', `Hook URI ${HOOK} did not answer within 2 seconds`])
    await owner.query('revoke execute on function public.custom_access_token_hook from supabase_auth_admin')
    const ungranted = await call(f, 'POST', '/token?grant_type=password', { email: 'gold@example.test', password: 'gold password' })
    t.match([ungranted.status, ungranted.body.code], [502, 'hook_custom_access_token_failed'], 'without the documented grant, a failure')

    // A refused or failed refresh rotates nothing: the token stays current with no child, and works once the hook is gone.
    await setAuthOptions(cp, ref, { hook_custom_access_token_uri: null })
    const session = (await signIn()).data.session!
    const chain = async () =>
      (
        await adminQuery<{ tokens: string; spent: boolean }>(
          db,
          `select count(*) as tokens, bool_or(revoked) filter (where token = $1) as spent from auth.refresh_tokens
           where session_id = (select session_id from auth.refresh_tokens where token = $1)`,
          [session.refresh_token],
        )
      ).rows[0]
    const unrefreshed = await chain()
    t.match(unrefreshed, { spent: false })
    const refusedRefresh = async (body: string, expected: [number, string]) => {
      await hookFunction(owner, 'custom_access_token_hook', body)
      await setAuthOptions(cp, ref, { hook_custom_access_token_uri: HOOK })
      const raw = await call(f, 'POST', '/token?grant_type=refresh_token', { refresh_token: session.refresh_token })
      t.match([raw.status, raw.body.code], expected)
      t.same(await chain(), unrefreshed, `${expected[1]}: the token was not rotated`)
    }
    await refusedRefresh(`begin return '{"error": {"http_code": 403, "message": "not now"}}'::jsonb; end`, [403, 'hook_custom_access_token_error'])
    await refusedRefresh(`begin return jsonb_build_object('claims', (event->'claims') - 'aal'); end`, [502, 'hook_custom_access_token_invalid_output'])
    await refusedRefresh(`begin raise exception 'broken hook'; end`, [502, 'hook_custom_access_token_failed'])
    await refusedRefresh(`begin perform pg_sleep(3); return jsonb_build_object('claims', event->'claims'); end`, [504, 'hook_custom_access_token_timeout'])
    await owner.query('create table public.hook_writes (id serial primary key); grant insert on public.hook_writes to supabase_auth_admin; grant usage on sequence public.hook_writes_id_seq to supabase_auth_admin')
    await hookFunction(owner, 'custom_access_token_hook', `begin insert into public.hook_writes default values; raise exception 'after a write'; end`)
    const supabase = f.anon()
    const failed = await supabase.auth.refreshSession({ refresh_token: session.refresh_token })
    t.match([failed.error?.status, failed.error?.message], [502, `Error running hook URI: ${HOOK}`], 'supabase-js sees the failure')
    t.equal(Number((await adminQuery<{ n: string }>(db, 'select count(*) as n from public.hook_writes')).rows[0]!.n), 0, "the failed hook's own writes are gone")
    t.same(await chain(), unrefreshed)
    await setAuthOptions(cp, ref, { hook_custom_access_token_uri: null })
    const spent = await f.anon().auth.refreshSession({ refresh_token: session.refresh_token })
    t.error(spent.error, 'the token was not spent')
    t.match(await chain(), { spent: true }, 'and is rotated now')
  })

  await t.test('the send email hook over HTTP: the sign-up mail, signed', async (t) => {
    const hook = await receiver(t, () => [200, {}])
    await setAuthOptions(cp, ref, { hook_send_email_uri: hook.url, hook_send_email_secrets: SECRET })
    t.teardown(() => setAuthOptions(cp, ref, { hook_send_email_uri: null, hook_send_email_secrets: null }))
    const smtpBefore = f.mail.messages.length
    const { data, error } = await f.anon().auth.signUp({ email: 'hooked@example.test', password: 'hooked password' })
    t.error(error)
    t.equal(hook.received.length, 1)
    const { headers, body } = hook.received[0]!
    const signed = `${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`
    const expected = `v1,${crypto.createHmac('sha256', SECRET_BYTES).update(signed).digest('base64')}`
    t.equal(headers['webhook-signature'], expected, 'Standard Webhooks signature')
    t.ok(Math.abs(Number(headers['webhook-timestamp']) - Date.now() / 1000) < 30)
    const event = JSON.parse(body)
    t.match(event, {
      metadata: { name: 'send_email', uuid: /^[0-9a-f-]{36}$/ },
      user: { id: data.user!.id, email: 'hooked@example.test' },
      email_data: { email_action_type: 'signup', token: /^\d{6}$/, token_hash: /^[0-9a-f]{56}$/, site_url: 'https://app.example.test', token_new: '', token_hash_new: '' },
    })
    t.equal(f.mail.messages.length, smtpBefore, 'nothing went by SMTP')
    const verified = await f.anon().auth.verifyOtp({ token_hash: event.email_data.token_hash, type: 'signup' })
    t.error(verified.error)
    t.equal(verified.data.user?.email, 'hooked@example.test', "the hook's token_hash confirms the address")
  })

  await t.test('a secure email change: one hook call carries both addresses\' codes, as GoTrue pairs them', async (t) => {
    const hook = await receiver(t, () => [200, {}])
    const created = await f.admin().auth.admin.createUser({ email: 'moving@example.test', password: 'moving password', email_confirm: true })
    t.error(created.error)
    await setAuthOptions(cp, ref, { hook_send_email_uri: hook.url, hook_send_email_secrets: SECRET })
    t.teardown(() => setAuthOptions(cp, ref, { hook_send_email_uri: null, hook_send_email_secrets: null }))
    const supabase = f.anon()
    t.error((await supabase.auth.signInWithPassword({ email: 'moving@example.test', password: 'moving password' })).error)
    t.error((await supabase.auth.updateUser({ email: 'moved@example.test' })).error)
    t.equal(hook.received.length, 1, 'one call for both addresses')
    const event = JSON.parse(hook.received[0]!.body)
    t.match(event, {
      user: { email: 'moving@example.test', new_email: 'moved@example.test' },
      email_data: { email_action_type: 'email_change', token: /^\d{6}$/, token_new: /^\d{6}$/, token_hash: /^[0-9a-f]{56}$/, token_hash_new: /^[0-9a-f]{56}$/ },
    })
    const data = event.email_data
    t.not(data.token, data.token_new)
    // token for the current address, token_new for the new one.
    t.error((await supabase.auth.verifyOtp({ email: 'moving@example.test', token: data.token, type: 'email_change' })).error)
    const done = await supabase.auth.verifyOtp({ email: 'moved@example.test', token: data.token_new, type: 'email_change' })
    t.error(done.error)
    const after = await f.admin().auth.admin.getUserById(created.data.user!.id)
    t.error(after.error)
    t.equal(after.data.user?.email, 'moved@example.test', 'both codes confirmed the change')
  })

  await t.test('a failing send email hook fails the sign-up and leaves no user', async (t) => {
    let answer: [number, unknown] = [500, { message: 'down' }]
    const hook = await receiver(t, () => answer)
    await setAuthOptions(cp, ref, { hook_send_email_uri: hook.url, hook_send_email_secrets: SECRET })
    t.teardown(() => setAuthOptions(cp, ref, { hook_send_email_uri: null, hook_send_email_secrets: null }))
    const users = async (email: string) => Number((await adminQuery<{ n: string }>(db, 'select count(*) as n from auth.users where email = $1', [email])).rows[0]!.n)
    const raw = await call(f, 'POST', '/signup', { email: 'failed@example.test', password: 'failed password' })
    t.match([raw.status, raw.body.code, raw.body.message], [502, 'hook_send_email_failed', `Error running hook URI: ${hook.url}`])
    t.equal(hook.received.length, 1, 'an error status is not retried')
    t.equal(await users('failed@example.test'), 0, 'no user')
    answer = [200, { error: { http_code: 429, message: 'Slow down' } }]
    const r = await f.anon().auth.signUp({ email: 'failed@example.test', password: 'failed password' })
    t.match([r.error?.status, r.error?.code, r.error?.message], [429, 'hook_send_email_error', 'Slow down'])
    t.equal(await users('failed@example.test'), 0, 'still no user')
  })

  await t.test('the send email hook as a database function', async (t) => {
    await owner.query(`create table public.sent_mails (email text, action text, token text);
      grant insert on public.sent_mails to supabase_auth_admin;`)
    await hookFunction(owner, 'send_email_hook', `
      begin
        insert into public.sent_mails values (event->'user'->>'email', event->'email_data'->>'email_action_type', event->'email_data'->>'token');
        return '{}'::jsonb;
      end`)
    await setAuthOptions(cp, ref, { hook_send_email_uri: 'pg-functions://postgres/public/send_email_hook' })
    t.teardown(() => setAuthOptions(cp, ref, { hook_send_email_uri: null }))
    t.error((await f.anon().auth.resetPasswordForEmail('gold@example.test')).error)
    const { rows } = await owner.query('select email, action, token from public.sent_mails')
    t.match(rows, [{ email: 'gold@example.test', action: 'recovery', token: /^\d{6}$/ }])

    await hookFunction(owner, 'send_email_hook', `begin return '{"error": {"http_code": 400, "message": "No mail for you"}}'::jsonb; end`)
    const refused = await f.anon().auth.signUp({ email: 'nomail@example.test', password: 'nomail password' })
    t.match([refused.error?.status, refused.error?.code, refused.error?.message], [400, 'hook_send_email_error', 'No mail for you'])
    t.equal((await adminQuery(db, `select 1 from auth.users where email = 'nomail@example.test'`)).rowCount, 0)
  })
})
