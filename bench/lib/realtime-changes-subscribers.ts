// bench:realtime's Postgres Changes subscribers (a process of its own,
// started by realtime-changes.ts): each a `ws` socket speaking Phoenix vsn
// 2.0.0 as realtime-js does (phx_join with the caller's token as
// access_token and one postgres_changes binding: INSERT on public.<table>
// with the filter team=eq.<its team>), ready once the server says "Subscribed
// to PostgreSQL". Each delivery of the phase's table from the phase's first
// row on is counted, with its latency from the row's sent_at (the insert's
// send, on the machine's monotonic clock) and from its commit_timestamp (the
// wall clock, to the millisecond), and checked: a row of another team is a
// delivery the subscriber should not have had.
import WebSocket from 'ws'
import { addLatency, emptyCounts, type LatencyCounts } from './realtime-histogram.ts'
import { childArg, fromParent, tellParent } from './realtime-process.ts'
import { heartbeats, withRetries } from './realtime-sockets.ts'
import { nowMicros } from './realtime-wire.ts'

export interface ChangesSocket {
  /** The socket URL with its apikey and vsn=2.0.0. */
  url: string
  /** The token the channel joins with (a user's access token, or the service_role key). */
  token: string
  table: string
  team: number
}

/** The sockets to open: sent over IPC, not as the process's argument (300 tokens are past the kernel's limit on one argument). */
export interface ChangesOpen {
  type: 'open'
  sockets: ChangesSocket[]
}

export interface ChangesReport {
  type: 'report'
  deliveries: number
  /** Deliveries of a row of another team than the socket's. */
  wrong: number
  /** From sent_at (µs precision). */
  latency: LatencyCounts
  /** From commit_timestamp (its milliseconds). */
  commitLatency: LatencyCounts
  /** Sockets that ended during the run. */
  lost: number
  /** The phase's rows that reached fewer than `members` sockets (at most MISSING_SHOWN of them, the first), and how many did. */
  short: Array<[seq: number, got: number]>
  shortRows: number
}

/** The parent's question at a phase's end: its last row, and how many sockets each row should reach. */
export interface ChangesReportRequest {
  type: 'report'
  lastSeq: number
  members: number
}

const MISSING_SHOWN = 10

const TOPIC = 'realtime:bench-items'
const CONNECTING_AT_ONCE = 25
const PROGRESS_MS = 5
const READY_MS = 30_000

/** The wall clock in microseconds (performance.now() on its origin), as commit_timestamp is. */
const wallMicros = () => (performance.timeOrigin + performance.now()) * 1000

function join(socket: ChangesSocket): string {
  const config = {
    broadcast: { ack: false, self: false },
    presence: { enabled: false, key: '' },
    postgres_changes: [{ event: 'INSERT', schema: 'public', table: socket.table, filter: `team=eq.${socket.team}` }],
    private: false,
  }
  return JSON.stringify(['1', '1', TOPIC, 'phx_join', { config, access_token: socket.token }])
}

type Frame = [string | null, string | null, string, string, Record<string, unknown>]

interface Change {
  table: string
  commit_timestamp: string
  record: { seq: number; team: number; sent_at: number }
}

childArg<null>()
// Asked for once listening: a message sent before this module listens would be dropped.
const { sockets } = await new Promise<ChangesOpen>((resolve) => {
  fromParent<ChangesOpen>('open', resolve)
  tellParent({ type: 'listening' })
})
let table = ''
let fromSeq = Number.MAX_SAFE_INTEGER
let deliveries = 0
let wrong = 0
let latency = emptyCounts()
let commitLatency = emptyCounts()
let lost = 0
/** Deliveries of each row of the phase, by seq - fromSeq. */
let perRow: number[] = []

function delivered(socket: ChangesSocket, change: Change): void {
  const now = nowMicros()
  const wall = wallMicros()
  if (change.table !== table || !(change.record.seq >= fromSeq)) return
  deliveries++
  perRow[change.record.seq - fromSeq] = (perRow[change.record.seq - fromSeq] ?? 0) + 1
  if (change.record.team !== socket.team) wrong++
  addLatency(latency, now - change.record.sent_at)
  addLatency(commitLatency, wall - Date.parse(change.commit_timestamp) * 1000)
}

/** A socket joined and told that its changes flow; rejects with why not. */
function open(socket: ChangesSocket): Promise<WebSocket> {
  const ws = new WebSocket(socket.url, { perMessageDeflate: false })
  return new Promise<WebSocket>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no "Subscribed to PostgreSQL" within 30 s')), READY_MS)
    const fail = (error: Error) => {
      clearTimeout(timer)
      reject(error)
    }
    ws.once('error', fail)
    ws.once('close', (code) => fail(new Error(`socket closed: ${code}`)))
    ws.once('open', () => {
      ws.on('message', function joining(data: Buffer, isBinary: boolean) {
        if (isBinary) return
        const [, ref, , event, payload] = JSON.parse(data.toString()) as Frame
        if (event === 'phx_reply' && ref === '1' && payload.status !== 'ok') fail(new Error(`phx_join refused: ${JSON.stringify(payload.response)}`))
        if (event !== 'system' || payload.extension !== 'postgres_changes') return
        if (payload.status !== 'ok') return fail(new Error(`postgres_changes: ${String(payload.message)}`))
        ws.off('message', joining)
        clearTimeout(timer)
        resolve(ws)
      })
      ws.send(join(socket))
    })
  }).then(
    () => {
      ws.removeAllListeners('error').removeAllListeners('close')
      ws.on('error', () => {})
      return ws
    },
    (error: unknown) => {
      ws.terminate()
      throw error
    },
  )
}

const closers: Array<() => void> = []
const retries: string[] = []
const started = Date.now()
for (let next = 0; next < sockets.length; ) {
  const batch = []
  for (; next < sockets.length && batch.length < CONNECTING_AT_ONCE; next++) {
    const socket = sockets[next]!
    batch.push(
      withRetries(() => open(socket)).then(({ socket: ws, retries: failed }) => {
        retries.push(...failed)
        ws.on('message', (data: Buffer, isBinary: boolean) => {
          if (isBinary) return
          const [, , , event, payload] = JSON.parse(data.toString()) as Frame
          if (event === 'postgres_changes') delivered(socket, payload.data as Change)
        })
        heartbeats(ws)
        let closing = false
        ws.on('close', () => closing || lost++)
        return () => {
          closing = true
          ws.terminate()
        }
      }),
    )
  }
  closers.push(...(await Promise.all(batch)))
}
tellParent({ type: 'ready', retries, seconds: (Date.now() - started) / 1000 })

let told = -1
let progress: NodeJS.Timeout | undefined
fromParent<{ type: 'reset'; table: string; fromSeq: number }>('reset', (message) => {
  table = message.table
  fromSeq = message.fromSeq
  deliveries = 0
  wrong = 0
  latency = emptyCounts()
  commitLatency = emptyCounts()
  perRow = []
  told = -1
  progress ??= setInterval(() => {
    if (deliveries === told) return
    told = deliveries
    tellParent({ type: 'progress', deliveries })
  }, PROGRESS_MS)
  tellParent({ type: 'reset' })
})

fromParent<ChangesReportRequest>('report', ({ lastSeq, members }) => {
  clearInterval(progress)
  progress = undefined
  const short: Array<[number, number]> = []
  let shortRows = 0
  for (let seq = fromSeq; seq <= lastSeq; seq++) {
    const got = perRow[seq - fromSeq] ?? 0
    if (got >= members) continue
    shortRows++
    if (short.length < MISSING_SHOWN) short.push([seq, got])
  }
  const report: ChangesReport = { type: 'report', deliveries, wrong, latency, commitLatency, lost, short, shortRows }
  tellParent(report)
})

fromParent('stop', () => {
  for (const close of closers) close()
  process.exit(0)
})
