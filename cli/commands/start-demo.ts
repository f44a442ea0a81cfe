// The demo project `start` makes on a first start. It is made once the node
// serves, so the embedded PostgreSQL dying meanwhile (issue 36 item 4) must not
// end the node: the making is tried again until the database answers.
import type { ControlPlane } from '../../control-plane/control-plane.ts'
import { dropProjectDatabase } from '../../control-plane/project-database.ts'
import { createProject, databaseNamesOf, listAllProjects, setProjectProduct } from '../../control-plane/projects.ts'
import type { ProjectRecord } from '../../lib/catalogue.ts'
import { whileUnavailable } from '../../lib/db/while-unavailable.ts'

export const DEMO_REF = 'demo'

export interface Demo {
  project: ProjectRecord
  /** Made by this start (its keys are printed once, now). */
  created: boolean
}

/**
 * The demo project, made (with Auth on) if the catalogue has none. `stopped`
 * ends the wait for an unavailable database (the process is asked to stop).
 */
export async function ensureDemoProject(controlPlane: ControlPlane, stopped: () => boolean): Promise<Demo> {
  let attempted = false
  let interrupted = false
  return whileUnavailable(
    'making the demo project',
    async () => {
      try {
        const existing = (await listAllProjects(controlPlane)).find((p) => p.ref === DEMO_REF)
        // A project this start was making when the database went away is this start's, keys and all.
        if (existing !== undefined && !attempted) return { project: existing, created: false }
        if (existing === undefined) {
          // createProject undoes a half-made database itself, but not while the server is down:
          // what an interrupted attempt left (its catalogue row was never committed) goes first.
          if (interrupted) await dropProjectDatabase(controlPlane.defaultServerUrl, databaseNamesOf(DEMO_REF))
          attempted = true
          await createProject(controlPlane, { name: 'Demo', ref: DEMO_REF })
        }
        return { project: await setProjectProduct(controlPlane, DEMO_REF, 'auth', true), created: true }
      } catch (error) {
        interrupted = attempted
        throw error
      }
    },
    { deadlineMs: Infinity, stopped },
  )
}
