// A Piscina task module run by the dispatcher on each concern thread at
// scrape time (`run(null, { filename })`): the thread's snapshot and the
// connections its project pools hold. It shares the thread's module
// instances, so it reads the same pools the concern's handler uses.
import type { PoolCounts } from '../db/project-pool.ts'
import { projectPools } from '../worker-context.ts'
import { threadSnapshot, type ThreadSnapshot } from './thread-tallies.ts'

export interface WorkerSnapshot extends ThreadSnapshot {
  /** Connections of this thread's pools, by project ref. */
  projects: Record<string, PoolCounts>
}

export default function workerSnapshot(): WorkerSnapshot {
  return { ...threadSnapshot(), projects: projectPools().stats().projects }
}
