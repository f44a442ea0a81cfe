// A real nats-server for the fleet's Realtime tests (dev/nats.ts), stopped when
// the test ends; the tests that need it skip, saying so, where it is missing.
import { startNats as startNatsServer, type RunningNats } from '../../dev/nats.ts'

export { natsServerBinary, type RunningNats } from '../../dev/nats.ts'

export async function startNats(t: { teardown(fn: () => unknown): void }, binary: string): Promise<RunningNats> {
  const nats = await startNatsServer(binary)
  t.teardown(() => nats.stop())
  return nats
}
