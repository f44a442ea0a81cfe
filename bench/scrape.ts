// npm run bench:scrape
// A /metrics scrape of a node whose projects have all had traffic on the three
// services (BENCH_PROJECTS, default 1,000): how long the main thread, which
// routes every project's requests, stops while the text is made. Baseplane
// writes the text on a thread of its own (server/metrics.ts, lib/metrics/
// exposition.ts); the peer, in the same run, writes the very same text with
// the same prom-client code on the main thread, as a process that formats its
// scrape where it serves does. The longest stall is the longest gap between
// 1 ms timer ticks during the scrape; medians of five scrapes each, alternating.
import os from 'node:os'
import { performance } from 'node:perf_hooks'
import { expositionText } from '../lib/metrics/exposition.ts'
import { packFigures } from '../lib/metrics/figures-packet.ts'
import { ProjectFigures } from '../lib/metrics/project-figures.ts'
import { PlatformMetrics } from '../server/metrics.ts'
import { median } from './lib/stats.ts'
import { reportCase } from './lib/report.ts'

const PROJECTS = Number(process.env.BENCH_PROJECTS ?? 1000)
const SCRAPES = 5

/** Runs `scrape` while a 1 ms timer ticks; its duration and the longest gap between ticks (the stall). */
async function stallOf(scrape: () => Promise<number>): Promise<{ millis: number; stall: number; bytes: number }> {
  let last = performance.now()
  let stall = 0
  let ticking = true
  const tick = () => {
    const now = performance.now()
    stall = Math.max(stall, now - last)
    last = now
    if (ticking) setTimeout(tick, 1)
  }
  setTimeout(tick, 1)
  const started = performance.now()
  const bytes = await scrape()
  const millis = performance.now() - started
  await new Promise((resolve) => setTimeout(resolve, 20))
  ticking = false
  return { millis, stall, bytes }
}


async function main(): Promise<void> {
  const figures = new ProjectFigures({ known: () => true })
  for (let p = 0; p < PROJECTS; p++) {
    const ref = `bench${String(p).padStart(15, '0')}`
    for (let service = 0; service < 3; service++) {
      for (let i = 0; i < 20; i++) {
        figures.answered(ref, service, [200, 404, 500][i % 3]!, i * 3.7)
        figures.waited(ref, service, i)
      }
    }
    figures.refused(ref, 1)
  }
  // No worker threads or push actors here: their snapshots add a few lines per thread, not per project.
  const metrics = new PlatformMetrics({ figures, dispatcher: { snapshots: async () => [] }, budget: { snapshot: () => [] } })
  const onThread = () => metrics.text().then((bytes) => bytes.byteLength)
  const onMain = async () => {
    const text = await expositionText({ lead: '', figures: packFigures(figures), workers: [], actors: undefined, servers: [], threads: [] })
    return Buffer.byteLength(text)
  }
  try {
    // Untimed: starts the exposition thread and compiles both paths.
    await onThread()
    await onMain()
    const thread: Array<{ millis: number; stall: number; bytes: number }> = []
    const main: Array<{ millis: number; stall: number; bytes: number }> = []
    for (let i = 0; i < SCRAPES; i++) {
      thread.push(await stallOf(onThread))
      main.push(await stallOf(onMain))
    }
    console.log(`scrape benchmark: ${PROJECTS} projects with traffic on three services, ${os.cpus().length} CPUs, median of ${SCRAPES} scrapes each\n`)
    const line = (name: string, runs: typeof thread) =>
      `${name.padEnd(44)} ${(median(runs.map((r) => r.bytes)) / 1e6).toFixed(1).padStart(5)} MB  scrape ${median(runs.map((r) => r.millis)).toFixed(0).padStart(5)} ms  longest main-thread stall ${median(runs.map((r) => r.stall)).toFixed(1).padStart(6)} ms`
    console.log(line('text written on the exposition thread', thread))
    console.log(line('peer: same text written on the main thread', main))
    console.log(`ratio main-thread stall, exposition thread / peer: ${(median(thread.map((r) => r.stall)) / median(main.map((r) => r.stall))).toFixed(3)} (lower is better)`)
    const figuresOf = (runs: typeof thread) => ({
      stallMs: median(runs.map((r) => r.stall)),
      scrapeMs: median(runs.map((r) => r.millis)),
      textBytes: median(runs.map((r) => r.bytes)),
    })
    // No goal is set for it (lower is better): the report carries the figure only.
    reportCase({
      suite: 'scrape', case: 'main-thread stall, exposition thread / main thread', figures: figuresOf(thread), peer: 'the same text written on the main thread',
      peerFigures: figuresOf(main), ratio: median(thread.map((r) => r.stall)) / median(main.map((r) => r.stall)), what: 'longest main-thread stall (lower is better)',
    })
  } finally {
    await metrics.close()
  }
}

await main()
