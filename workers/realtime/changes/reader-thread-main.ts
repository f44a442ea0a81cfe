// The change reader thread's entry (started by reader-thread.ts): one reader
// host, its batches and statuses posted to the parent, stopped on its word.
import { parentPort, workerData } from 'node:worker_threads'
import { describeError } from '../../../lib/log.ts'
import type { ReaderThreadMessage, ReaderThreadRequest } from './messages.ts'
import { ReaderHost, type ReaderHostOptions } from './reader-host.ts'

const port = parentPort!
const tell = (message: ReaderThreadMessage) => port.postMessage(message)

try {
  const host = new ReaderHost(workerData as ReaderHostOptions, {
    batch: (batch) => tell({ kind: 'batch', batch }),
    status: (status) => tell({ kind: 'status', status }),
  })
  host.start()
  port.on('message', (message: ReaderThreadRequest) => {
    if (message.kind === 'want') host.want(message.ref)
    else if (message.kind === 'unwant') host.unwant(message.ref)
    else void host.stop().finally(() => port.close())
  })
  tell({ kind: 'ready' })
} catch (err) {
  tell({ kind: 'failed', message: describeError(err) })
  port.close()
}
