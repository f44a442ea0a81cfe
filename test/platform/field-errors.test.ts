// Several wrong fields are all refused at once (issue 28 item 10): the Google
// settings and a mail template name every field's problem in one refusal, so a
// dashboard form draws each beside its input and the admin API answers them
// together; nothing is saved.
import t from 'tap'
import { request, type ErrorBody } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

t.test('the Google settings and a template refuse every wrong field together', async (t) => {
  const platform = await startTestPlatform(t)
  const project = await platform.createProject({ auth: true })
  const admin = { authorization: `Bearer ${platform.config.adminToken}` }
  const api = `${platform.origin}/platform/v1/projects/${project.ref}/auth`

  const google = await request<ErrorBody>(`${api}/google`, { method: 'PUT', headers: admin, body: { client_id: '  ', client_secret: ' ' } })
  t.equal(google.status, 400, google.text)
  t.equal(google.json.code, 'invalid_argument')
  t.match(google.json.message, /The Google client ID must not be empty; The Google client secret must not be empty/, 'both fields named')
  const stored = await request<{ client_id: string | null; client_secret: string }>(`${api}/google`, { headers: admin })
  t.equal(stored.json.client_id, null, 'nothing saved')

  const template = await request<ErrorBody>(`${api}/templates/confirmation`, { method: 'PUT', headers: admin, body: { subject: '', body: '<p>no link</p>' } })
  t.equal(template.status, 400, template.text)
  t.match(template.json.message, /subject/i, 'the subject named')
  t.match(template.json.message, /ConfirmationURL/, 'and the body')
  const templates = await request<Array<{ kind: string; custom: boolean }>>(`${api}/templates`, { headers: admin })
  t.equal(templates.json.find((entry) => entry.kind === 'confirmation')?.custom, false, 'nothing saved')
})

t.test("APNs credentials name every wrong field together, in Push's own shape", async (t) => {
  const platform = await startTestPlatform(t)
  const project = await platform.createProject({ push: true })
  const reply = await request<ErrorBody>(`${project.baseUrl}/push/v1/credentials/apns`, {
    method: 'PUT',
    headers: { apikey: project.serviceRoleKey },
    body: { topic: 'not a bundle id!', key_id: 'short', team_id: 'TEAM123456', environment: 'staging', keys: [] },
  })
  t.equal(reply.status, 400, reply.text)
  t.equal(reply.json.code, 'validation_failed', "Push's code")
  for (const field of ['topic must be', 'key_id must be', 'environment must be', 'keys must be']) t.match(reply.json.message, field, `names ${field.split(' ')[0]}`)
  t.notMatch(reply.json.message, 'team_id', 'and not the right one')
})
