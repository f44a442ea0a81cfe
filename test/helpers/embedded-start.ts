// `baseplane start` on a fresh home, as a process, for the tests that kill its
// embedded PostgreSQL while it starts (issue 36 item 4): the pid file read, the
// kill at a chosen moment, and the checks that it keeps answering and heals.
import { createClient } from '@supabase/supabase-js'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Test } from 'tap'
import { freePort } from '../../lib/db/embedded.ts'
import { request, type Reply } from './http.ts'

// initdb, crash recovery, migrations and the demo project on a loaded 2-core machine: far less than this.
const SERVED_WITHIN_MS = 120_000

export interface Node {
  home: string
  origin: string
  output: () => string
  /** Set once the process exits (it must not, until the test stops it). */
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined
  exited: Promise<void>
  /** SIGTERM, as a process manager stops it; resolves once it exited. */
  stop(): Promise<void>
}

export function startNode(t: Test): Promise<Node> {
  return (async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'baseplane-kill-at-start-'))
    const port = await freePort()
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      BASEPLANE_HOME: home,
      PORT: String(port),
      BASEPLANE_EMBEDDED_PG_PORT: String(await freePort()),
      BASEPLANE_LOG_LEVEL: 'info',
    }
    delete env.DATABASE_URL
    delete env.BASEPLANE_ADMIN_TOKEN
    const child = spawn(process.execPath, ['bin/baseplane.mjs', 'start'], { env })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk))
    const node: Node = {
      home,
      origin: `http://127.0.0.1:${port}`,
      output: () => output,
      exit: undefined,
      exited: new Promise((resolve) =>
        child.on('exit', (code, signal) => {
          node.exit = { code, signal }
          resolve()
        }),
      ),
      stop: async () => {
        if (node.exit === undefined) child.kill('SIGTERM')
        await node.exited
      },
    }
    t.teardown(async () => {
      await node.stop()
      fs.rmSync(home, { recursive: true, force: true })
    })
    return node
  })()
}

export async function stopNode(t: Test, node: Node): Promise<void> {
  t.equal(node.exit, undefined, 'the node never exited by itself')
  await node.stop()
  t.same(node.exit, { code: 0, signal: null }, 'asked to stop, it exits 0')
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export async function until<T>(what: string, node: Node, probe: () => Promise<T | undefined>, everyMs = 5): Promise<T> {
  const deadline = Date.now() + SERVED_WITHIN_MS
  while (Date.now() < deadline) {
    if (node.exit !== undefined) throw new Error(`the node exited (${JSON.stringify(node.exit)}) while waiting for ${what}:\n${node.output()}`)
    const found = await probe()
    if (found !== undefined) return found
    await sleep(everyMs)
  }
  throw new Error(`timed out waiting for ${what}:\n${node.output()}`)
}

/** The pid file's pid (initdb's single-user servers write theirs negated) and status line, if there is one. */
export function pidFile(node: Node): { pid: number; status: string } | undefined {
  try {
    const lines = fs.readFileSync(path.join(node.home, 'pgdata', 'postmaster.pid'), 'utf8').split('\n')
    const pid = Number(lines[0])
    return Number.isInteger(pid) && pid !== 0 ? { pid, status: (lines[7] ?? '').trim() } : undefined
  } catch {
    return undefined
  }
}

export function kill(pid: number): boolean {
  try {
    process.kill(pid, 'SIGKILL')
    return true
  } catch {
    return false
  }
}

/** SIGKILLs the first process `which` picks from the pid file that is still alive to be killed; its pid. */
export function killWhen(node: Node, what: string, which: (file: { pid: number; status: string }) => boolean): Promise<number> {
  return until(what, node, async () => {
    const file = pidFile(node)
    return file !== undefined && which(file) && kill(Math.abs(file.pid)) ? Math.abs(file.pid) : undefined
  }, 1)
}

export const healthOk = (node: Node) => until('/health to answer ok', node, async () => ((await request(`${node.origin}/health`).catch(() => undefined))?.status === 200 ? true : undefined))

function adminToken(node: Node): string {
  return fs.readFileSync(path.join(node.home, 'admin-token'), 'utf8').trim()
}

/** Every answer a probe got: while PostgreSQL is away, only 503 with Retry-After is allowed besides the healthy answer. */
export class Answers {
  readonly bad: string[] = []
  count = 0

  check(what: string, reply: Reply | undefined, healthy: number[]): boolean {
    if (reply === undefined) return false
    this.count++
    if (healthy.includes(reply.status)) return true
    if (reply.status !== 503 || reply.headers['retry-after'] === undefined) this.bad.push(`${what}: ${reply.status} ${JSON.stringify(reply.headers['retry-after'])} ${reply.text.slice(0, 200)}`)
    return false
  }
}

/** Probes the platform's /health and its admin API (the catalogue) until the banner is printed; each answer checked. */
export async function servedAfterKill(t: Test, node: Node): Promise<{ anon: string; baseUrl: string }> {
  const answers = new Answers()
  await until('the banner', node, async () => {
    answers.check('/health', await request(`${node.origin}/health`).catch(() => undefined), [200])
    if (fs.existsSync(path.join(node.home, 'admin-token'))) {
      const listed = await request(`${node.origin}/platform/v1/projects`, { headers: { authorization: `Bearer ${adminToken(node)}` } }).catch(() => undefined)
      answers.check('admin API', listed, [200])
    }
    return node.output().includes('Press Ctrl-C to stop.') ? true : undefined
  }, 100)
  t.same(answers.bad, [], `every answer while it started was ok or 503 with Retry-After (${answers.count} answers)`)
  const field = (label: string) => new RegExp(`${label}\\s+(\\S+)`).exec(node.output())?.[1] ?? ''
  return { anon: field('anon key'), baseUrl: field('base URL') }
}

/** What a user does after the start: REST and Auth (real supabase-js) answer, with no error. */
export async function servesProject(t: Test, node: Node, demo: { anon: string; baseUrl: string }): Promise<void> {
  t.match(demo.baseUrl, `${node.origin}/project/demo`, 'the banner names the demo project')
  const health = await request(`${node.origin}/health`)
  t.equal(health.status, 200, '/health answers ok')
  const rest = await request(`${demo.baseUrl}/rest/v1/`, { headers: { apikey: demo.anon } })
  t.equal(rest.status, 200, 'REST answers')
  const supabase = createClient(demo.baseUrl, demo.anon, { auth: { persistSession: false } })
  const { data, error } = await supabase.auth.signUp({ email: `user${Date.now()}@example.com`, password: 'correct horse battery' })
  t.equal(error, null, 'Auth signs a user up')
  t.ok(data.user?.id, 'and answers the user')
}

export const deaths = (node: Node) => node.output().split('\n').filter((line) => line.includes('"embedded PostgreSQL exited'))

