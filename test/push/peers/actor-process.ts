// A data-plane process's push actor host on its own, for tests that kill it
// (SIGKILL: no goodbye, locks and claimed rows left as a crash leaves them).
import { startPushActorHost } from '../../../workers/push/actor-host.ts'

const host = await startPushActorHost({
  catalogueUrl: process.env.CATALOGUE_URL!,
  defaultServerUrl: process.env.SERVER_URL!,
  endpoints: { apnsUrl: process.env.APNS_URL },
  claimRetryMs: 200,
  pollIntervalMs: 1000,
})
const timer = setInterval(() => {
  if (host.claimed().length > 0) {
    process.stdout.write('claimed\n')
    clearInterval(timer)
  }
}, 20)
process.on('SIGTERM', () => void host.stop().then(() => process.exit(0)))
