// One project's change reader: a replication connection to its database (as
// its server's admin role: only a superuser or a REPLICATION role may stream,
// and no owner code runs on this connection), a TEMPORARY pgoutput slot on it
// (pgoutput.ts), and the transactions it decodes handed on. It runs while this
// node holds the project's lease (reader-host.ts). The connection failing, it
// starts again after a pause with a new slot: what was committed between the
// two slots is not read (docs/realtime.md says so, as Supabase says it can
// drop changes). A server without logical decoding is told to the subscribers
// and asked again less often.
import crypto from 'node:crypto'
import { LogicalReplicationService, type Pgoutput } from 'pg-logical-replication'
import { describeError, log } from '../../../lib/log.ts'
import { TransactionAssembler } from './decode.ts'
import type { ChangeBatch, ReaderStatus } from './messages.ts'
import { TemporarySlotPlugin, WalLevelError } from './pgoutput.ts'
import type { ReaderConnection } from './reader-host.ts'

const RETRY_MS = 1000
const WAL_LEVEL_RETRY_MS = 30_000
/** How often the reader confirms what it has seen (a status message per change cost the walsender as much as decoding). */
const CONFIRM_MS = 1000

/**
 * The LSN before `lsn`. pg-logical-replication's acknowledge(lsn) reports lsn + 1 as written, flushed and
 * applied; a walsender ending (its server shutting down cleanly: a restart, a Patroni switchover) waits
 * until the client reports exactly what it was sent, so a report one past it held the shutdown until
 * wal_sender_timeout (60 s), and Patroni's switchover failed. Given the LSN before, it reports that LSN.
 */
export function lsnBefore(lsn: string): string | undefined {
  const [high, low] = lsn.split('/')
  const value = (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`)
  if (value === 0n) return undefined
  const before = value - 1n
  return `${(before >> 32n).toString(16).toUpperCase()}/${(before & 0xffffffffn).toString(16).toUpperCase()}`
}

export interface ReaderEvents {
  batch(batch: ChangeBatch): void
  status(status: ReaderStatus): void
}

/** A slot name of the node's own (at most 63 bytes; lowercase letters, digits, underscores). */
const slotName = (ref: string) => `baseplane_rt_${ref.replace(/[^a-z0-9]/g, '_').slice(0, 30)}_${crypto.randomBytes(6).toString('hex')}`

export class ProjectReader {
  readonly #ref: string
  readonly #connection: () => Promise<ReaderConnection>
  readonly #events: ReaderEvents
  #service: LogicalReplicationService | undefined
  #release: (() => void) | undefined
  #retry: NodeJS.Timeout | undefined
  #confirming: NodeJS.Timeout | undefined
  #stopped = false

  /** `connection`: where to connect, asked at every start (the project may have moved), holding a unit of the budget. */
  constructor(ref: string, connection: () => Promise<ReaderConnection>, events: ReaderEvents) {
    this.#ref = ref
    this.#connection = connection
    this.#events = events
  }

  start(): void {
    void this.#run()
  }

  async #run(): Promise<void> {
    if (this.#stopped) return
    let connection: ReaderConnection
    try {
      connection = await this.#connection()
    } catch (error) {
      return this.#again(error, RETRY_MS)
    }
    if (this.#stopped) return connection.release()
    const url = connection.url
    // Given back once: by a failure (after the connection is destroyed) or by stop(), whichever comes first.
    let held = true
    const release = () => {
      if (held) connection.release()
      held = false
    }
    this.#release = release
    const plugin = new TemporarySlotPlugin(() => this.#events.status({ ref: this.#ref, state: 'streaming' }))
    const assembler = new TransactionAssembler(this.#ref, plugin.typeNames)
    const service = new LogicalReplicationService(
      { connectionString: url, application_name: `baseplane-realtime-${this.#ref}`, connectionTimeoutMillis: 5000, keepAlive: true },
      // The slot is temporary and never read again: what the reader has seen it may confirm at once, but once a
      // second (CONFIRM_MS) and when the server asks, by the reader itself (lsnBefore says why not the library's).
      { acknowledge: { auto: false, timeoutSeconds: 0 } },
    )
    this.#service = service
    const confirm = (lsn: string) => {
      const before = lsn === '0/00000000' ? undefined : lsnBefore(lsn)
      if (before !== undefined) void service.acknowledge(before).catch(() => {})
    }
    clearInterval(this.#confirming)
    const confirming = setInterval(() => confirm(service.lastLsn()), CONFIRM_MS)
    this.#confirming = confirming
    service.on('heartbeat', (lsn: string, _timestamp: number, shouldRespond: boolean) => {
      if (shouldRespond) confirm(lsn)
    })
    let failed = false
    const fail = (error: unknown) => {
      clearInterval(confirming)
      if (failed || this.#service !== service) return
      failed = true
      this.#service = undefined
      void service
        .destroy()
        .catch(() => {})
        .finally(release)
      this.#again(error, error instanceof WalLevelError ? WAL_LEVEL_RETRY_MS : RETRY_MS)
    }
    service.on('data', (_lsn: string, message: Pgoutput.Message) => {
      try {
        const batch = assembler.add(message)
        if (batch) this.#events.batch(batch)
      } catch (error) {
        log.error('realtime change not decoded', error, { ref: this.#ref })
      }
    })
    service.on('error', fail)
    try {
      await service.subscribe(plugin, slotName(this.#ref))
      // The stream ended without an error (the server closed it): start again unless stopping.
      fail(new Error('the replication stream ended'))
    } catch (error) {
      fail(error)
    }
  }

  #again(error: unknown, ms: number): void {
    if (this.#stopped) return
    if (error instanceof WalLevelError) this.#events.status({ ref: this.#ref, state: 'unavailable', code: 'wal_level', message: error.message })
    else {
      this.#events.status({ ref: this.#ref, state: 'stopped' })
      log.info('realtime change reader stopped; starting it again', { ref: this.#ref, error: describeError(error) })
    }
    this.#retry = setTimeout(() => void this.#run(), ms)
  }

  /** Ends the connection (and with it the slot). */
  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#retry)
    clearInterval(this.#confirming)
    const service = this.#service
    this.#service = undefined
    await service?.destroy().catch(() => {})
    this.#release?.()
  }
}
