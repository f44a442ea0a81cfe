// The push actor thread's entry (started by actor-thread.ts): one actor host,
// its claims reported to the parent, stopped on the parent's word.
import { parentPort, workerData } from 'node:worker_threads'
import { describeError } from '../../lib/log.ts'
import { startPushActorHost } from './actor-host.ts'
import type { ActorThreadMessage, ActorThreadRequest, PushActorThreadOptions } from './actor-thread.ts'
import { threadSnapshot } from '../../lib/metrics/thread-tallies.ts'

const port = parentPort!
const tell = (message: ActorThreadMessage) => port.postMessage(message)

try {
  const host = await startPushActorHost({ ...(workerData as PushActorThreadOptions), onClaimsChanged: (refs) => tell({ kind: 'claims', refs }) })
  port.on('message', (message: ActorThreadRequest) => {
    // The metrics' scrape: this thread's busy time and its delivery tally.
    if (message.kind === 'snapshot') return tell({ kind: 'snapshot', id: message.id, snapshot: threadSnapshot() })
    if (message.kind !== 'stop') return
    // Closing the port lets the thread end once the host has let go of everything; its tally goes first,
    // so the deliveries of its last batches are counted in the node's usage (PushActorThread.lastSnapshot).
    void host.stop().finally(() => {
      tell({ kind: 'snapshot', id: 0, snapshot: threadSnapshot() })
      port.close()
    })
  })
  tell({ kind: 'ready' })
} catch (err) {
  // A refused connection to a name with two addresses is an AggregateError with an empty message.
  tell({ kind: 'failed', message: describeError(err) })
  port.close()
}
