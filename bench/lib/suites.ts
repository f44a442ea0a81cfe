// The suites `npm run bench` runs (bench/all.ts), in bench/README.md's order,
// what each needs installed, and one suite run as a child process with the
// same command as its own npm script, its cases gathered from BENCH_REPORT.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { readCases, type CaseReport } from './report.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')

interface SuiteSpec {
  name: string
  /** Programs the suite cannot run without. */
  needs: string[]
  /** Programs without which some of its cases skip themselves (the suite still runs). */
  optional?: string[]
}

export const SUITES: readonly SuiteSpec[] = [
  { name: 'dataplane', needs: ['wrk'] },
  { name: 'graphql', needs: [] },
  { name: 'auth', needs: ['wrk'] },
  { name: 'push', needs: [] },
  { name: 'tenants', needs: ['wrk'] },
  { name: 'fleet', needs: ['wrk'] },
  { name: 'scrape', needs: [] },
  { name: 'rest', needs: ['wrk'] },
  { name: 'realtime', needs: [], optional: ['nats-server'] },
  { name: 'storage', needs: [] },
]

export interface SuiteResult {
  suite: string
  /** The command run, as in package.json's `bench:<suite>` script, with any BENCH_<SUITE>_ARGS after it. */
  command: string
  /** passed: exit status 0; failed: another status or a signal; skipped: a program it needs is missing (not run). */
  status: 'passed' | 'failed' | 'skipped'
  exitCode?: number
  signal?: string
  seconds: number
  /** Why it failed or was skipped: the missing program, or the last lines it wrote to stderr. */
  reason?: string
  /** What the suite's run should be read with (a program missing that some of its cases need). */
  notes?: string[]
  cases: CaseReport[]
}

/** Whether `program` is an executable file on PATH (or in /usr/sbin, where Debian puts nats-server). */
export function installed(program: string): boolean {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/local/sbin']
  return dirs.some((dir) => {
    try {
      fs.accessSync(path.join(dir, program), fs.constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

/** package.json's `bench:<name>` script split into words, its `node` this process's Node (the same Node runs every suite). */
function scriptOf(name: string): string[] {
  const { scripts } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  const script = scripts[`bench:${name}`]
  if (script === undefined) throw new Error(`package.json has no script bench:${name}`)
  const words = script.split(/\s+/)
  if (words[0] !== 'node') throw new Error(`bench:${name} is not a node command: ${script}`)
  return [process.execPath, ...words.slice(1)]
}

/** BENCH_<SUITE>_ARGS, for the suites that take options as arguments (tenants, fleet: `--seconds 2 --projects 20`). */
function extraArgs(name: string): string[] {
  const raw = process.env[`BENCH_${name.toUpperCase()}_ARGS`]
  return raw === undefined ? [] : raw.split(/\s+/).filter(Boolean)
}

/** An error's own line as Node prints an uncaught one (`Error: ...`, pg's `error: ...`). */
export const ERROR_LINE = /^(\w*Error\b|error:)/

/** `n` lines of `text` for a failure's reason: from its first error line if it has one, else its last lines. */
function reasonOf(text: string, n: number): string {
  // Node's own trailer under an uncaught error says nothing about the suite.
  const lines = text.trimEnd().split('\n').filter((line) => !/^Node\.js v\d/.test(line))
  const first = lines.findIndex((line) => ERROR_LINE.test(line.trim()))
  return (first >= 0 ? lines.slice(first, first + n) : lines.slice(-n)).join('\n').trim()
}

/** The child of the suite running now, so that an interrupt reaches it (bench/all.ts). */
export let running: ReturnType<typeof spawn> | undefined

/** Runs one suite to its end, its output passed through; a missing program skips it. */
export async function runSuite(spec: SuiteSpec): Promise<SuiteResult> {
  const [node, ...args] = [...scriptOf(spec.name), ...extraArgs(spec.name)]
  const command = [path.basename(node!), ...args].join(' ')
  const missing = spec.needs.filter((program) => !installed(program))
  if (missing.length > 0) return { suite: spec.name, command, status: 'skipped', seconds: 0, reason: `not installed: ${missing.join(', ')}`, cases: [] }
  const notes = (spec.optional ?? []).filter((program) => !installed(program)).map((program) => `${program} is not installed: the cases that need it skip themselves`)

  const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), `bp-bench-${spec.name}-`)), 'cases.jsonl')
  const started = performance.now()
  const child = spawn(node!, args, { cwd: ROOT, env: { ...process.env, BENCH_REPORT: report }, stdio: ['ignore', 'pipe', 'pipe'] })
  running = child
  // Passed through as it comes; only the end of each is kept, for the reason of a failure.
  const tail = { stdout: '', stderr: '' }
  for (const stream of ['stdout', 'stderr'] as const) {
    child[stream]!.on('data', (chunk: Buffer) => {
      process[stream].write(chunk)
      tail[stream] = (tail[stream] + chunk.toString()).slice(-8000)
    })
  }
  const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
    child.once('error', (error) => {
      tail.stderr += `\n${error.message}`
      resolve([null, null])
    })
    child.once('close', (code, sig) => resolve([code, sig]))
  })
  running = undefined
  const cases = readCases(report)
  fs.rmSync(path.dirname(report), { recursive: true, force: true })
  const result: SuiteResult = {
    suite: spec.name,
    command,
    status: exitCode === 0 ? 'passed' : 'failed',
    ...(exitCode === null ? {} : { exitCode }),
    ...(signal === null ? {} : { signal }),
    seconds: Math.round((performance.now() - started) / 100) / 10,
    cases,
  }
  // A suite says why on stderr when it throws, on stdout when it finds a wrong answer (bench:rest).
  if (result.status === 'failed') result.reason = reasonOf(tail.stderr, 12) || reasonOf(tail.stdout, 12) || `exit status ${exitCode ?? signal}`
  if (notes.length > 0) result.notes = notes
  return result
}
