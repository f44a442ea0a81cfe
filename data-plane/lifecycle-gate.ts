// What the data plane does with a project that is not active (issue 27 item
// 4), once the request has passed the key checks (so a caller without the
// project's key learns nothing more than before):
//
// - suspended: 403 project_suspended, in the concern's refusal shape. Never the
//   operator's reason, which the record carries for operators only.
// - paused, when the fleet does not wake on request: 403 project_paused.
// - paused, when it does (BASEPLANE_WAKE_ON_REQUEST): the request asks for the
//   resume (`wake`, the control plane's, handed in by server/lifecycle.ts; the
//   requests of one node that arrive meanwhile share one), waits for it at most
//   BASEPLANE_WAKE_WAIT_MS, and is then served with the record read again; a
//   resume not done by then answers 503 project_waking with Retry-After (it
//   goes on, and a later request finds the project active).
import type { ProjectRecord } from '../lib/catalogue.ts'
import { platformErrors } from '../lib/errors.ts'
import { log } from '../lib/log.ts'

/** Retry-After of a wake not done in time: a resume takes a catalogue change and every node's acknowledgement (at most 5 s). */
export const WAKE_RETRY_AFTER_SECONDS = 5

export interface Waker {
  /** Resumes the paused project (or finds it resumed): resolves once every node applied it. */
  wake(ref: string): Promise<unknown>
  /** How long a request waits for it (BASEPLANE_WAKE_WAIT_MS). */
  waitMillis: number
}

export class LifecycleGate {
  readonly #waker: Waker | undefined
  readonly #reload: (ref: string) => Promise<ProjectRecord | undefined>
  /** Wakes under way on this node, by ref. */
  readonly #waking = new Map<string, Promise<boolean>>()

  /** `reload`: the directory's read of the catalogue (after a wake, the record as every node now has it). */
  constructor(reload: (ref: string) => Promise<ProjectRecord | undefined>, waker?: Waker) {
    this.#reload = reload
    this.#waker = waker
  }

  /** The record to serve a project that is not active with: throws its refusal, or resolves once it is woken. */
  admit(project: ProjectRecord): Promise<ProjectRecord> {
    if (project.state === 'suspended') return Promise.reject(platformErrors.projectSuspended())
    if (this.#waker === undefined) return Promise.reject(platformErrors.projectPaused())
    return this.#woken(project.ref, this.#waker)
  }

  async #woken(ref: string, waker: Waker): Promise<ProjectRecord> {
    let waking = this.#waking.get(ref)
    if (waking === undefined) {
      waking = waker.wake(ref).then(
        () => true,
        (error: unknown) => {
          log.error('could not resume a paused project for its request', error, { ref })
          return false
        },
      )
      this.#waking.set(ref, waking)
      void waking.finally(() => this.#waking.delete(ref))
    }
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), waker.waitMillis)))
    const woken = await Promise.race([waking, late]).finally(() => clearTimeout(timer))
    if (!woken) throw platformErrors.projectWaking(WAKE_RETRY_AFTER_SECONDS)
    const fresh = await this.#reload(ref)
    if (fresh === undefined) throw platformErrors.unknownProject(ref)
    // Suspended meanwhile by its operator; anything else but active is not served either.
    if (fresh.state === 'suspended') throw platformErrors.projectSuspended()
    if (fresh.state !== 'active') throw platformErrors.projectWaking(WAKE_RETRY_AFTER_SECONDS)
    return fresh
  }
}
