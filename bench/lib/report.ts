// One line of the benchmark report per ratio a suite prints. Every suite calls
// reportCase() where it prints a ratio, so `npm run bench` (bench/all.ts) can
// gather every case of every suite in one machine-readable file. The suites'
// own output is unchanged: this writes only when BENCH_REPORT names a file
// (all.ts sets it for each suite it runs), as one JSON object a line, appended,
// so a suite that fails half-way still leaves the cases it finished.
import fs from 'node:fs'
import type { LoadResult } from './wrk.ts'

/** The ratio's goal as bench/README.md states it: at least n (higher is better) or at most n (lower is better). */
export type Goal = { atLeast: number } | { atMost: number }

/** Named figures of one side: requestsPerSecond, p50Ms, p99Ms, errors, or what the suite measures (deliveriesPerSecond, mbPerSecond...). */
export type Figures = Record<string, number>

export interface CaseInput {
  /** The suite's npm script name without `bench:` (rest, graphql, realtime...). */
  suite: string
  /** The case as the suite prints it, unique within the suite. */
  case: string
  /** Baseplane's side. */
  figures: Figures
  /** What it is compared with (PostGraphile, plain pg, node-apn, 1 node...). */
  peer: string
  peerFigures: Figures
  /** The ratio the suite prints (usually figures / peerFigures; see `what`). */
  ratio: number
  /** What the ratio divides, when not obvious from the figures ("req/s", "p99 ms", "main-thread stall"). */
  what?: string
  goal?: Goal
  /** Each run's or round's ratio, when the printed ratio is their median. */
  runs?: number[]
}

export interface CaseReport extends CaseInput {
  /** Whether the ratio meets its goal; absent when the case has none. */
  met?: boolean
}

/** Whether `ratio` meets `goal`; undefined when there is no goal. A ratio that is not a number (a side that did nothing) misses it. */
export function meets(ratio: number, goal: Goal | undefined): boolean | undefined {
  if (goal === undefined) return undefined
  if (!Number.isFinite(ratio)) return false
  return 'atLeast' in goal ? ratio >= goal.atLeast : ratio <= goal.atMost
}

/** The goal as the suites print it: ">= 0.8", "<= 2". */
export function describeGoal(goal: Goal | undefined): string {
  if (goal === undefined) return ''
  return 'atLeast' in goal ? `>= ${goal.atLeast}` : `<= ${goal.atMost}`
}

/** Non-finite figures (a side that answered nothing) become null in JSON; they are left out instead, so every figure present is a number. */
function finite(figures: Figures): Figures {
  return Object.fromEntries(Object.entries(figures).filter(([, value]) => Number.isFinite(value)))
}

/** Records one case in BENCH_REPORT's file, when it is set; returns the record either way. */
export function reportCase(input: CaseInput): CaseReport {
  const record: CaseReport = { ...input, figures: finite(input.figures), peerFigures: finite(input.peerFigures), met: meets(input.ratio, input.goal) }
  const file = process.env.BENCH_REPORT
  if (file) fs.appendFileSync(file, `${JSON.stringify(record)}\n`)
  return record
}

/** A side measured with wrk, or a rate a second counted in-process (a peer without HTTP). */
export type Rate = LoadResult | number

/** A side's figures for the report: wrk's, or the rate alone. */
export function rateFigures(side: Rate): Figures {
  if (typeof side === 'number') return { requestsPerSecond: side }
  return { requestsPerSecond: side.requestsPerSecond, p50Ms: side.p50Ms, p99Ms: side.p99Ms, non2xx: side.non2xx }
}

const rateOf = (side: Rate) => (typeof side === 'number' ? side : side.requestsPerSecond)

/** Records a printed ratio of two rates: ours / theirs, in requests (or operations) a second. */
export function reportRates(suite: string, name: string, ours: Rate, peer: string, theirs: Rate, goal?: Goal): CaseReport {
  return reportCase({ suite, case: name, figures: rateFigures(ours), peer, peerFigures: rateFigures(theirs), ratio: rateOf(ours) / rateOf(theirs), what: 'req/s', goal })
}

/** The records of a BENCH_REPORT file (a suite killed mid-line leaves a partial last line, which is skipped). */
export function readCases(file: string): CaseReport[] {
  if (!fs.existsSync(file)) return []
  const cases: CaseReport[] = []
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue
    try {
      cases.push(JSON.parse(line) as CaseReport)
    } catch {
      // The partial line of a suite that was killed while writing it.
    }
  }
  return cases
}
