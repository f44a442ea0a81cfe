// A body past the platform's limit posted to the dashboard answers 413, as
// every other surface does (issue 28 item 10: the sign-in form answered 500
// and logged an error).
import t from 'tap'
import { MAX_BODY_BYTES } from '../../lib/http/body.ts'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

t.test('a 2 MB form to the dashboard: 413, saying why', async (t) => {
  const platform = await startTestPlatform(t)
  const form = `token=${'x'.repeat(2 * 1024 * 1024)}`
  for (const path of ['/dashboard/login', '/dashboard/projects/new']) {
    const reply = await request(`${platform.origin}${path}`, {
      method: 'POST',
      headers: { origin: platform.origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    })
    t.equal(reply.status, 413, path)
    t.match(reply.text, `Request body exceeds ${MAX_BODY_BYTES} bytes`, path)
  }
  const fine = await request(`${platform.origin}/dashboard/login`, {
    method: 'POST',
    headers: { origin: platform.origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: platform.config.adminToken! }).toString(),
  })
  t.equal(fine.status, 303, 'a form within the limit signs in')
})
