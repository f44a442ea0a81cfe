// Servers that were down when this node started: their projects answer 503
// meanwhile, and their project databases are brought up to date as soon as
// they answer again, tried every few seconds, without a restart.
import { log } from '../lib/log.ts'
import type { ControlPlane } from '../control-plane/control-plane.ts'
import { upgradeProjectsOn } from '../control-plane/projects.ts'

/** How often a server that was down is tried again. */
export const UPGRADE_RETRY_MS = 5000

export class PendingUpgrades {
  #down: string[]
  #timer: NodeJS.Timeout | undefined
  #running = false

  constructor(controlPlane: ControlPlane, down: string[]) {
    this.#down = down
    if (down.length === 0) return
    log.info('database servers down at start; their projects answer 503 until they return', { servers: down })
    this.#timer = setInterval(() => {
      if (this.#running) return
      this.#running = true
      upgradeProjectsOn(controlPlane, this.#down)
        .then(({ applied, down: still }) => {
          for (const [ref, versions] of applied) log.info('project database upgraded', { ref, versions })
          this.#down = still
          if (still.length === 0) this.stop()
        })
        .catch((error: unknown) => log.error('upgrading the project databases of returning servers failed; trying again', error))
        .finally(() => (this.#running = false))
    }, UPGRADE_RETRY_MS)
    this.#timer.unref()
  }

  /** Servers still waited for. */
  get down(): readonly string[] {
    return this.#down
  }

  stop(): void {
    clearInterval(this.#timer)
    this.#timer = undefined
  }
}
