// Issue 36 item 4: the embedded PostgreSQL killed (SIGKILL) in the first seconds
// of `baseplane start`: during initdb, during its first start, and right after
// /health first answers ok. Each time the node keeps running (never exits),
// answers only ok or 503 with Retry-After while PostgreSQL is away, and heals
// by itself: /health, REST and Auth answer without a restart.
import fs from 'node:fs'
import t from 'tap'
import { deaths, healthOk, kill, killWhen, pidFile, servedAfterKill, servesProject, startNode, stopNode } from '../helpers/embedded-start.ts'

function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8')
  } catch {
    return ''
  }
}

t.test('killed during initdb, then again during its first start: the node starts and serves', async (t) => {
  const node = await startNode(t)
  // initdb first probes settings with short `postgres --check` runs (a failed probe only picks
  // other values); the bootstrap and single-user servers that make the cluster are the ones to kill.
  const initdb = await killWhen(node, "initdb's server", (file) => {
    if (file.pid > 0) throw new Error("the postmaster started before any of initdb's servers was seen")
    return file.pid < 0 && /--boot|--single/.test(commandLine(-file.pid))
  })
  t.ok(initdb > 0, 'a server of initdb was killed')
  // Its first postmaster, as soon as it is seen: almost always still starting (status "starting", crash recovery ahead).
  await killWhen(node, 'the first postmaster', (file) => file.pid > 0)
  const demo = await servedAfterKill(t, node)
  t.match(node.output(), 'embedded PostgreSQL initdb failed; initialising again', 'initdb was run again')
  t.match(node.output(), /embedded PostgreSQL exited (while starting|unexpectedly); starting it again/, 'the first postmaster was started again')
  await servesProject(t, node, demo)
  await stopNode(t, node)
})

t.test('killed right after /health first answers ok: the node keeps running and heals', async (t) => {
  const node = await startNode(t)
  await healthOk(node)
  const killed = pidFile(node)!.pid
  t.ok(kill(killed), 'the postmaster is killed')
  const demo = await servedAfterKill(t, node)
  t.match(deaths(node)[0], `"pid":${killed}`, 'its death was logged, and it was started again')
  await servesProject(t, node, demo)
  await stopNode(t, node)
})
