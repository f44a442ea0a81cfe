// Per-thread state of a concern's worker: its options and its own LRU of
// project connection pools (pg pools cannot be shared across threads).
import { workerData } from 'node:worker_threads'
import { ProjectPools } from './db/project-pools.ts'
import type { WorkerOptions } from './service.ts'

let pools: ProjectPools | undefined

export function workerOptions(): WorkerOptions {
  const options = workerData as WorkerOptions | undefined
  return (
    options ?? {
      maxProjectConnections: 50,
      projectPoolSize: 4,
      idleConnectionMillis: 10000,
      mail: { smtpUrl: undefined, from: 'Baseplane <no-reply@mail.baseplane.local>' },
      push: { fcmTokenUrl: 'https://oauth2.googleapis.com/token', allowInsecureWebPushEndpoints: false },
      google: {
        authorizationUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
        tokenUrl: 'https://oauth2.googleapis.com/token',
        certsUrl: 'https://www.googleapis.com/oauth2/v3/certs',
        issuer: 'https://accounts.google.com',
      },
    }
  )
}

export function projectPools(): ProjectPools {
  if (pools === undefined) {
    const options = workerOptions()
    pools = new ProjectPools({
      maxConnections: options.maxProjectConnections,
      poolSize: options.projectPoolSize,
      idleMillis: options.idleConnectionMillis,
      applicationName: 'baseplane-worker',
    })
  }
  return pools
}
