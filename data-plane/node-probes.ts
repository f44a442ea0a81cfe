// GET /live and GET /ready (issue 43 item 4): the node's probes for
// orchestrators, beside /health, answered as PostgREST's admin server answers
// its own: a status and an empty body.
//
// - /live: 200 while the process answers HTTP. A process that is wedged does
//   not answer at all, which an orchestrator counts as a failure by its own
//   timeout; nothing the node can find out about itself is a reason to be
//   restarted (an unreachable catalogue or a thread being replaced heals
//   without one), so /live never says otherwise.
// - /ready: 200 when the node may be sent requests: it is not draining, every
//   concern's worker threads are up, it has loaded the set of projects that
//   exist, and /health's verdict on the catalogue holds (reached within the
//   probe's cache, or, the link's cache being warm, serving what it knows
//   unless BASEPLANE_CATALOGUE_SILENCE_MS bounds that). 503 with Retry-After
//   otherwise.
import type { OutgoingResponse } from '../lib/http.ts'

export interface ReadinessSources {
  /** /health's answer (data-plane/platform-health.ts); absent: the catalogue is not a condition. */
  health?: { response(): OutgoingResponse | Promise<OutgoingResponse> }
  /** Whether every concern has its threads (data-plane/dispatcher.ts). */
  threadsUp(): boolean
  /** Whether the node has loaded the refs that exist (data-plane/project-directory.ts). */
  projectsLoaded(): boolean
}

const RETRY_AFTER_SECONDS = 2
const LIVE: OutgoingResponse = { status: 200, headers: {}, body: '' }

export function liveResponse(): OutgoingResponse {
  return { ...LIVE, headers: {} }
}

function notReady(): OutgoingResponse {
  return { status: 503, headers: { 'retry-after': String(RETRY_AFTER_SECONDS) }, body: '' }
}

export async function readyResponse(sources: ReadinessSources): Promise<OutgoingResponse> {
  if (!sources.threadsUp() || !sources.projectsLoaded()) return notReady()
  // /health says draining (503 stopping) and the catalogue's state in one answer, cached and bounded by its probe.
  const health = sources.health === undefined ? undefined : await sources.health.response()
  if (health !== undefined && health.status !== 200) return notReady()
  return { status: 200, headers: {}, body: '' }
}
