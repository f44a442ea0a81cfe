// A platform process's view of a provider behind a private CA: the credential
// check (the service account must obtain a token over https) and the actor
// thread sending over HTTP/2 + TLS, in a process of its own so that the test
// chooses its NODE_EXTRA_CA_CERTS (Node reads it once, at start-up).
// Prints one JSON line: {stored} or {code, message} ({} with ACTOR_ONLY); then "ready" once the
// actor thread holds the project; stops on SIGTERM.
import { ControlPlane } from '../../../control-plane/control-plane.ts'
import { setPushCredentials } from '../../../control-plane/push-admin.ts'
import { BaseplaneError } from '../../../lib/errors.ts'
import { startPushActorThread } from '../../../workers/push/actor-thread.ts'

const env = (name: string) => process.env[name]!
const controlPlane = await ControlPlane.open(env('CATALOGUE_URL'))
// ACTOR_ONLY: the keys are stored already; only send.
if (process.env.ACTOR_ONLY) process.stdout.write('{}\n')
else try {
  const stored = await setPushCredentials(controlPlane, env('REF'), 'fcm', env('SERVICE_ACCOUNT'), { fcmTokenUrl: env('FCM_TOKEN_URL') })
  process.stdout.write(`${JSON.stringify({ stored: stored.project_id })}\n`)
} catch (error) {
  if (!BaseplaneError.is(error)) throw error
  process.stdout.write(`${JSON.stringify({ code: error.code, message: error.message })}\n`)
  await controlPlane.close()
  process.exit(0)
}
await controlPlane.close()
const thread = await startPushActorThread({
  catalogueUrl: env('CATALOGUE_URL'),
  defaultServerUrl: env('SERVER_URL'),
  endpoints: { fcmUrl: env('FCM_URL'), fcmTokenUrl: env('FCM_TOKEN_URL') },
  claimRetryMs: 200,
})
const timer = setInterval(() => {
  if (thread.claimed().includes(env('REF'))) {
    process.stdout.write('ready\n')
    clearInterval(timer)
  }
}, 20)
process.on('SIGTERM', () => void thread.stop().then(() => process.exit(0)))
