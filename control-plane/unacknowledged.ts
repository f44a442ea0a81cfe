// Which data-plane nodes had not applied a change when the control plane
// stopped waiting for them (issue 24 item 3). ControlPlane.changed() ends
// every operation that changes a project, in whichever module the operation
// lives; rather than thread its answer through each of them, the admin API and
// the CLI run an operation inside withUnacknowledged(), and changed() reports
// into it. The last change of an operation decides: a node that acknowledged
// it has applied every change before it.
import { AsyncLocalStorage } from 'node:async_hooks'

/** The admin API's response header naming them, comma-separated, present only when some are. */
export const UNACKNOWLEDGED_HEADER = 'baseplane-unacknowledged-nodes'

const reports = new AsyncLocalStorage<{ nodes: string[] }>()

/** Runs `work` and returns its result with the nodes that had not acknowledged its last change in time. */
export async function withUnacknowledged<T>(work: () => Promise<T>): Promise<{ result: T; unacknowledged: string[] }> {
  const report = { nodes: [] as string[] }
  const result = await reports.run(report, work)
  return { result, unacknowledged: report.nodes }
}

/** ControlPlane.changed(): the nodes that did not acknowledge the change it waited for. */
export function reportUnacknowledged(nodes: string[]): void {
  const report = reports.getStore()
  if (report !== undefined) report.nodes = nodes
}
