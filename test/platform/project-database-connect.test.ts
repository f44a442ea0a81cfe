// The control plane's short connections to a project's server (the admin
// API's and the dashboard's, the GraphQL tab's runs among them) give up on a
// server that accepts and never answers, as an unavailable database: 503
// with Retry-After, never a caller held forever.
import t from 'tap'
import { silentServer } from '../helpers/silent-server.ts'
import { CONNECT_TIMEOUT_MS, withClient } from '../../control-plane/project-database.ts'
import { unavailableAs } from '../../lib/db/database-errors.ts'
import { platformErrors } from '../../lib/errors.ts'

t.test('a server that accepts and never answers fails the connection within its bound, as unavailable', async (t) => {
  const { port } = await silentServer(t)
  const started = Date.now()
  let ran = false
  const error = await withClient(`postgres://nobody:secret@127.0.0.1:${port}/project`, async () => {
    ran = true
  }).then(
    () => undefined,
    (error: unknown) => error,
  )
  const took = Date.now() - started
  t.equal(ran, false, 'the work never ran')
  t.ok(error instanceof Error, 'the connection failed')
  t.ok(took >= CONNECT_TIMEOUT_MS - 100 && took < CONNECT_TIMEOUT_MS + 3000, `it gave up after ${took} ms (bound ${CONNECT_TIMEOUT_MS} ms)`)
  const answer = unavailableAs(error, platformErrors.someDatabaseUnavailable)
  t.equal(answer?.status, 503, 'it answers 503')
  t.ok((answer?.retryAfter ?? 0) > 0, 'with Retry-After')
})
