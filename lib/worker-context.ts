// Per-thread state of a concern's worker: its options and its project
// connection pools (pg connections cannot cross threads; the per-server
// connection budget they spend is shared by every thread of the process).
import { workerData } from 'node:worker_threads'
import { createConnectionBudget } from './db/connection-budget.ts'
import { ProjectPools } from './db/project-pools.ts'
import type { ThreadOptions, WorkerOptions, WorkerSectionName } from './service.ts'

let pools: ProjectPools | undefined
let standalone: WorkerOptions | undefined

/** The options the dispatcher gave this thread (its concern's sections only); defaults when a handler runs in-process (tests). */
export function workerOptions(): ThreadOptions {
  const options = workerData as ThreadOptions | undefined
  if (options) return options
  standalone ??= {
    maxProjectConnections: 50,
    projectPoolSize: 4,
    idleConnectionMillis: 10000,
    connectionBudget: createConnectionBudget(),
    mail: { smtpUrl: undefined, from: 'Baseplane <no-reply@mail.baseplane.local>' },
    push: { fcmTokenUrl: 'https://oauth2.googleapis.com/token', allowInsecureWebPushEndpoints: false },
    google: {
      authorizationUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
      tokenUrl: 'https://oauth2.googleapis.com/token',
      certsUrl: 'https://www.googleapis.com/oauth2/v3/certs',
      issuer: 'https://accounts.google.com',
    },
  }
  return standalone
}

/** This thread's own section of the configuration; a thread of a concern that was not given it fails loudly. */
export function workerSection<K extends Exclude<WorkerSectionName, 'rest'>>(name: K): WorkerOptions[K] {
  const section = workerOptions()[name] as WorkerOptions[K] | undefined
  if (section === undefined) throw new Error(`this worker thread was not given the ${name} settings (lib/service.ts WORKER_SECTIONS)`)
  return section
}

export function projectPools(): ProjectPools {
  if (pools === undefined) {
    const options = workerOptions()
    pools = new ProjectPools({
      maxConnections: options.maxProjectConnections,
      poolSize: options.projectPoolSize,
      idleMillis: options.idleConnectionMillis,
      applicationName: 'baseplane-worker',
      budget: options.connectionBudget,
    })
  }
  return pools
}
