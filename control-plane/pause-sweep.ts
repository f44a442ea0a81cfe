// The pause of idle free projects (issue 27 item 4), off unless
// BASEPLANE_PAUSE_IDLE_DAYS is set. Every node runs the sweep on a timer
// (server/lifecycle.ts); one at a time does it, under an advisory lock in the
// catalogue (the others skip and look again next time). A project's last
// activity is its last recorded request (baseplane.project_activity, written
// by each node once a flush interval), else its last change of state (a
// resume), else its creation; each is paused under its row's lock, where the
// condition is asked again (suspension.ts pauseProject).
import { log } from '../lib/log.ts'
import type { ControlPlane } from './control-plane.ts'
import { idleFreeProjects, tryLockPauseSweep, unlockPauseSweep } from './db/project-states.ts'
import { pauseProject } from './suspension.ts'

/** Projects paused by one sweep at most: a large backlog is worked through sweep by sweep. */
const SWEEP_BATCH = 100

/**
 * Pauses the free projects idle for longer than `idleMillis`; answers their
 * refs (none when another node is sweeping). A project whose server does not
 * answer is left for the next sweep.
 */
export async function pauseIdleProjects(controlPlane: ControlPlane, idleMillis: number): Promise<string[]> {
  const lock = await controlPlane.catalogue.connect()
  try {
    if (!(await tryLockPauseSweep(lock))) return []
    try {
      const paused: string[] = []
      for (const { ref } of await idleFreeProjects(lock, idleMillis, SWEEP_BATCH)) {
        try {
          if (await pauseProject(controlPlane, ref, idleMillis)) paused.push(ref)
        } catch (error) {
          log.info('could not pause an idle project; trying again at the next sweep', { ref, error: (error as Error).message })
        }
      }
      if (paused.length > 0) log.info('idle free projects paused', { projects: paused, idleMillis })
      return paused
    } finally {
      await unlockPauseSweep(lock)
    }
  } finally {
    lock.release()
  }
}
