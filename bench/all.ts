// `npm run bench`: every suite one after the other (BENCH_SUITES=rest,graphql
// for some), each a child process running its own npm script's command with
// BENCH_REPORT set, so each prints what it prints alone and records its cases
// (bench/lib/report.ts). Then one report, bench/results/report-<time>.json:
// the machine, Node, PostgreSQL, the commit and every suite's cases, and a
// summary table with every goal missed. A suite that fails or lacks a program
// it needs is recorded as such and the run goes on.
//
// Exit status 1 when a suite failed (exited non-zero or was killed); a missed
// goal is a finding, not a failure, and leaves it 0. A skipped suite too.
//
// `npm run bench -- --summary bench/results/report-X.json` prints an earlier
// report's summary as markdown (bench/README.md's Summary) and runs nothing.
import fs from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { commit, machine, postgres, type Commit, type Machine, type Postgres } from './lib/run-environment.ts'
import { runSuite, running, SUITES, type SuiteResult } from './lib/suites.ts'
import { summaryMarkdown, summaryText } from './lib/summary.ts'

const RESULTS = path.resolve(import.meta.dirname, 'results')

/** bench/results/report-*.json; bench/README.md documents every field. */
export interface BenchReport {
  format: 1
  started: string
  finished: string
  machine: Machine
  node: string
  postgres: Postgres
  commit: Commit
  /** The BENCH_* settings the suites ran with (DATABASE_URL is not copied: it may hold a password). */
  settings: Record<string, string>
  /** Whether the run was cut short by a signal (the suites after it did not run). */
  interrupted?: boolean
  suites: SuiteResult[]
}

function usage(message: string): never {
  console.error(`bench: ${message}\nusage: npm run bench [-- --summary bench/results/report-<time>.json]   (BENCH_SUITES=${SUITES.map((s) => s.name).join(',')} to choose)`)
  process.exit(2)
}

function options(): { summary?: string } {
  try {
    const { values } = parseArgs({ options: { summary: { type: 'string' } }, strict: true })
    return values
  } catch (error) {
    usage((error as Error).message)
  }
}

/** BENCH_SUITES's suites, in bench/README.md's order; all of them when it is unset. */
function chosenSuites(): typeof SUITES {
  const raw = process.env.BENCH_SUITES
  if (raw === undefined || raw.trim() === '') return SUITES
  const names = raw.split(',').map((name) => name.trim()).filter(Boolean)
  const unknown = names.filter((name) => !SUITES.some((s) => s.name === name))
  if (unknown.length > 0) usage(`BENCH_SUITES names unknown suite(s) ${unknown.join(', ')}; the suites are ${SUITES.map((s) => s.name).join(', ')}`)
  return SUITES.filter((s) => names.includes(s.name))
}

const settings = () => Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[0].startsWith('BENCH_') && entry[1] !== undefined))

/** report-2026-12-04T18-50-01Z.json: the start time in ISO 8601, its colons made hyphens for file systems that refuse them. */
const fileName = (started: string) => `report-${started.replace(/\.\d+Z$/, 'Z').replace(/:/g, '-')}.json`

async function run(): Promise<number> {
  const suites = chosenSuites()
  const started = new Date().toISOString()
  const report: BenchReport = { format: 1, started, finished: started, machine: machine(), node: process.version, postgres: await postgres(), commit: commit(), settings: settings(), suites: [] }
  console.log(`bench: ${suites.map((s) => s.name).join(', ')}; Node ${report.node}, ${report.postgres.version ?? `PostgreSQL version unknown (${report.postgres.error})`}, commit ${report.commit.hash?.slice(0, 7) ?? 'none'}${report.commit.dirty ? ' with changes' : ''}`)

  // An interrupt reaches the running suite (which ends its own processes); the run then stops and still writes its report.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      report.interrupted = true
      running?.kill(signal)
    })
  }
  for (const spec of suites) {
    if (report.interrupted) break
    console.log(`\n=== bench:${spec.name} ===`)
    const result = await runSuite(spec)
    report.suites.push(result)
    const status = result.status === 'skipped' ? `skipped (${result.reason})` : `${result.status} in ${result.seconds} s, ${result.cases.length} case(s) recorded`
    console.log(`=== bench:${spec.name}: ${status} ===`)
  }
  report.finished = new Date().toISOString()

  fs.mkdirSync(RESULTS, { recursive: true })
  const file = path.join(RESULTS, fileName(started))
  fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
  console.log(`\nsummary (${path.relative(process.cwd(), file)}):\n`)
  console.log(summaryText(report))
  const failed = report.suites.filter((s) => s.status === 'failed')
  if (failed.length > 0) console.log(`\nexit status 1: ${failed.map((s) => s.suite).join(', ')} failed (a missed goal alone leaves it 0)`)
  return failed.length > 0 || report.interrupted ? 1 : 0
}

const { summary } = options()
if (summary !== undefined) {
  if (!fs.existsSync(summary)) usage(`--summary: no such file: ${summary}`)
  console.log(summaryMarkdown(JSON.parse(fs.readFileSync(summary, 'utf8')) as BenchReport))
} else {
  process.exitCode = await run()
}
