// The summary of a benchmark report: a table of every case (suite, case,
// ratio, goal, met), as text for the terminal or as markdown for
// bench/README.md, and the list of goals missed and suites not run.
import { describeGoal, type CaseReport } from './report.ts'
import { ERROR_LINE, type SuiteResult } from './suites.ts'

/** The parts of a report (bench/all.ts's BenchReport) the summary reads. */
export interface Summarised {
  started: string
  node: string
  postgres: { version?: string }
  commit: { hash?: string; dirty?: boolean }
  machine: { cpus: number; cpuModel: string }
  suites: SuiteResult[]
}

const ratioText = (ratio: number) => (Number.isFinite(ratio) ? ratio.toFixed(2) : 'n/a')
const metText = (c: CaseReport) => (c.met === undefined ? '-' : c.met ? 'yes' : 'NO')

interface Row {
  suite: string
  case: string
  ratio: string
  goal: string
  met: string
}

function rows(report: Summarised): Row[] {
  const all: Row[] = []
  for (const suite of report.suites) {
    if (suite.status === 'skipped') all.push({ suite: suite.suite, case: `(skipped: ${suite.reason})`, ratio: '', goal: '', met: '' })
    for (const c of suite.cases) all.push({ suite: suite.suite, case: c.case, ratio: ratioText(c.ratio), goal: describeGoal(c.goal), met: metText(c) })
    if (suite.status === 'failed') {
      const finished = suite.cases.length > 0 ? 'the cases above are those it finished' : 'no case finished'
      all.push({ suite: suite.suite, case: `(failed: ${suite.signal ?? `exit ${suite.exitCode}`}; ${finished})`, ratio: '', goal: '', met: '' })
    }
  }
  return all
}

/** The line of a failure's reason that says most: its error's message, else its last line. */
function headline(reason: string): string {
  const lines = reason.split('\n').map((line) => line.trim()).filter(Boolean)
  // Node prints the throwing source line before the error itself: the error's own line is the one.
  return lines.find((line) => ERROR_LINE.test(line)) ?? lines.at(-1) ?? ''
}

/** Every case whose goal was missed. */
export function missedGoals(report: Summarised): CaseReport[] {
  return report.suites.flatMap((suite) => suite.cases.filter((c) => c.met === false))
}

/** The table as fixed-width text, then what was missed and what did not run. */
export function summaryText(report: Summarised): string {
  const table = rows(report)
  const widths = { suite: 9, case: 40 }
  for (const row of table) {
    widths.suite = Math.max(widths.suite, row.suite.length)
    widths.case = Math.max(widths.case, Math.min(row.case.length, 90))
  }
  const line = (r: Row) => `${r.suite.padEnd(widths.suite)}  ${r.case.padEnd(widths.case)}  ${r.ratio.padStart(6)}  ${r.goal.padEnd(7)}  ${r.met}`.trimEnd()
  const out = [line({ suite: 'suite', case: 'case', ratio: 'ratio', goal: 'goal', met: 'met' }), ...table.map(line)]
  const missed = missedGoals(report)
  out.push('')
  if (missed.length === 0) out.push('no goal missed')
  else {
    out.push(`${missed.length} goal(s) missed:`)
    for (const c of missed) out.push(`  ${c.suite}: ${c.case}: ${ratioText(c.ratio)} (goal ${describeGoal(c.goal)})`)
  }
  for (const suite of report.suites.filter((s) => s.status !== 'passed')) out.push(`${suite.suite} ${suite.status}: ${headline(suite.reason ?? '')}`)
  return out.join('\n')
}

/** The table in markdown, as bench/README.md's Summary shows it, with the run it came from. */
export function summaryMarkdown(report: Summarised): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|')
  const when = `${report.started.slice(0, 10)}, ${report.commit.hash?.slice(0, 7) ?? 'no commit'}${report.commit.dirty ? ' (with changes)' : ''}`
  const out = [
    `From \`npm run bench\` on ${when}: Node ${report.node}, ${report.postgres.version?.split(' on ')[0] ?? 'PostgreSQL (version unknown)'}, ${report.machine.cpus} × ${report.machine.cpuModel}.`,
    '',
    '| suite | case | ratio | goal | met |',
    '| --- | --- | --- | --- | --- |',
    ...rows(report).map((r) => `| ${cell(r.suite)} | ${cell(r.case)} | ${r.met === 'NO' ? `**${r.ratio}**` : r.ratio} | ${r.goal} | ${r.met} |`),
  ]
  return out.join('\n')
}
