// Without an SMTP server the project's mail waits in its outbox (issue 28
// item 10): the project's own service_role reads it at GET
// {base_url}/auth/v1/admin/mail, so a developer follows a confirmation link
// without asking the operator; any other caller is refused as GoTrue refuses
// its admin routes.
import t from 'tap'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

interface OutboxBody {
  mail?: Array<{ id: number; kind: string; to: string; subject: string; html: string | null; delivery: string; created_at: string }>
  code?: string | number
  error_code?: string
  msg?: string
  message?: string
}

t.test("the outbox, for the project's service_role", async (t) => {
  const platform = await startTestPlatform(t, { SMTP_URL: '' })
  const project = await platform.createProject({ auth: true })
  const auth = (path: string, apikey: string, body?: object) =>
    request<OutboxBody>(`${project.baseUrl}/auth/v1${path}`, { headers: { apikey, authorization: `Bearer ${apikey}` }, body })
  const signUp = await auth('/signup', project.anonKey, { email: 'waiting@example.test', password: 'a fine password 123' })
  t.equal(signUp.status, 200, signUp.text)

  const read = await auth('/admin/mail', project.serviceRoleKey)
  t.equal(read.status, 200, read.text)
  t.equal(read.json.mail?.length, 1, 'one mail')
  const mail = read.json.mail![0]!
  t.match(mail, { kind: 'confirmation', to: 'waiting@example.test', delivery: 'outbox' })
  t.match(mail.html, new RegExp(`${project.baseUrl}/auth/v1/verify\\?token=`), 'its body holds the confirmation link')

  const anon = await auth('/admin/mail', project.anonKey)
  t.equal(anon.status, 403, 'the anon key is refused')
  t.equal(anon.json.error_code, 'not_admin')
  const bad = await auth('/admin/mail?limit=0', project.serviceRoleKey)
  t.equal(bad.status, 400, 'a bad limit is refused')
  t.match(bad.json.msg ?? bad.json.message, /limit must be from 1 to 200/)
  const limited = await request<OutboxBody>(`${project.baseUrl}/auth/v1/admin/mail?limit=1`, { headers: { apikey: project.serviceRoleKey } })
  t.equal(limited.status, 200)
  t.equal(limited.json.mail?.length, 1)
})
