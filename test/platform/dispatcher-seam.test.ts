// The seam into the threads (issue 37 item 5): each concern's threads are
// given only their own section of the configuration (the SMTP URL, which may
// carry a password, reaches Auth's threads only), and a build missing a
// concern's worker file fails the start instead of answering 503 for ever.
import t from 'tap'
import { createConnectionBudget } from '../../lib/db/connection-budget.ts'
import { ConfigError } from '../../lib/errors.ts'
import type { Concern, WorkerOptions } from '../../lib/service.ts'
import { Dispatcher, threadOptionsOf } from '../../data-plane/dispatcher.ts'

const options: WorkerOptions = {
  maxProjectConnections: 10,
  projectPoolSize: 2,
  idleConnectionMillis: 1000,
  connectionBudget: createConnectionBudget(),
  mail: { smtpUrl: 'smtp://user:secret@mail.example:587', from: 'Baseplane <no-reply@example.com>' },
  push: { fcmTokenUrl: 'https://oauth2.googleapis.com/token', allowInsecureWebPushEndpoints: false },
  google: { authorizationUrl: 'https://a.example', tokenUrl: 'https://t.example', certsUrl: 'https://c.example', issuer: 'https://i.example' },
  rest: { maxRows: 1000, aggregates: false },
}

t.test("each concern's threads get only their own sections", async (t) => {
  const sections = (concern: Concern) => ['mail', 'push', 'google', 'rest'].filter((name) => name in threadOptionsOf(concern, options))
  t.same(sections('auth'), ['mail', 'google'])
  t.same(sections('push'), ['push'])
  t.same(sections('rest'), ['rest'])
  t.same(sections('graphql'), [])
  t.notMatch(JSON.stringify({ ...threadOptionsOf('rest', options), connectionBudget: undefined }), /secret/, "the SMTP password never reaches REST's threads")
  const auth = threadOptionsOf('auth', options)
  t.equal(auth.mail?.smtpUrl, options.mail.smtpUrl, "Auth's threads keep the mail settings")
  t.equal(auth.connectionBudget, options.connectionBudget, 'the common options are given to every thread')
  t.ok('mail' in options, "the node's own options are left whole")
})

t.test('a missing worker file fails the start', async (t) => {
  let dispatcher: Dispatcher | undefined
  t.teardown(() => dispatcher?.close())
  let refused: unknown
  try {
    dispatcher = new Dispatcher({ logLevel: 'silent', threads: { nosuch: 1 } as unknown as Record<Concern, number>, tasksPerThread: 4, stickyMillis: 1000, worker: options })
  } catch (error) {
    refused = error
  }
  t.ok(refused instanceof ConfigError, 'refused as a configuration error')
  t.match((refused as Error).message, /^The nosuch worker is missing \(.*nosuch.*\): run npm run build$/)
  t.equal(dispatcher, undefined)
})

t.test('a concern this node runs no threads for answers the catalogue\'s 503', async (t) => {
  const dispatcher = new Dispatcher({ logLevel: 'silent', threads: {} as Record<Concern, number>, tasksPerThread: 4, stickyMillis: 1000, worker: options })
  t.teardown(() => dispatcher.close())
  const refused = await dispatcher.run({ concern: 'rest', project: { ref: 'abcdefghijklmnopqrst', plan: 'free' } } as never).then(
    () => undefined,
    (error: unknown) => error,
  )
  t.match(refused, { code: 'service_unavailable', status: 503, message: 'The rest service is not available on this node' })
})
