// bench:storage's clients: closed loops of requests (each of `concurrency`
// workers sends its next request when its last is answered) timed for a
// while, and uploads sent slowly (a throttled client) for the memory case.
import fs from 'node:fs'
import http from 'node:http'
import { performance } from 'node:perf_hooks'

export interface Loop {
  /** Requests answered. */
  count: number
  bytes: number
  /** From the first request to the last answer. */
  seconds: number
  latenciesMs: number[]
}

/**
 * Runs `concurrency` workers, each calling `op(worker, n)` (n counts that
 * worker's calls) until `seconds` have passed; the calls under way then finish
 * and are counted. `op` answers the bytes it moved and throws on a wrong answer.
 */
export async function closedLoop(concurrency: number, seconds: number, op: (worker: number, n: number) => Promise<number>): Promise<Loop> {
  const started = performance.now()
  const deadline = started + seconds * 1000
  const loop: Loop = { count: 0, bytes: 0, seconds: 0, latenciesMs: [] }
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (let n = 0; performance.now() < deadline; n++) {
        const sent = performance.now()
        // Read once answered: `loop.bytes += await ...` would add to the total as it was before the await.
        const moved = await op(worker, n)
        loop.bytes += moved
        loop.latenciesMs.push(performance.now() - sent)
        loop.count++
      }
    }),
  )
  loop.seconds = (performance.now() - started) / 1000
  return loop
}

/** The value below which `fraction` of the values fall (nearest rank). */
export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))]!
}

/** A process's resident set in KB (VmRSS), from /proc. */
export function rssKb(pid: number): number {
  const found = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
  if (found === null) throw new Error(`no VmRSS for process ${pid}`)
  return Number(found[1])
}

export interface SlowUpload {
  url: URL
  headers: Record<string, string>
  size: number
  /** Bytes a write, and the pause between writes. */
  chunkBytes: number
  everyMs: number
  /** Told the bytes written so far after each write. */
  onSent?(bytes: number): void
}

/**
 * One upload sent slowly: `chunkBytes` every `everyMs` (a slow link), the next
 * write only once the last was taken (so a server that stops reading stops the
 * client too). Resolves with the status and body of the answer.
 */
export function slowUpload(upload: SlowUpload, chunk: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(upload.url, { method: 'POST', headers: { ...upload.headers, 'content-length': String(upload.size) }, agent: false }, (res) => {
      let body = ''
      res.on('data', (data: Buffer) => (body += data.toString()))
      res.on('end', () => resolve({ status: res.statusCode!, body }))
      res.on('error', reject)
    })
    req.on('error', reject)
    let sent = 0
    const next = () => {
      if (sent >= upload.size) return void req.end()
      const part = chunk.subarray(0, Math.min(upload.chunkBytes, upload.size - sent))
      sent += part.byteLength
      upload.onSent?.(sent)
      const taken = req.write(part)
      const later = () => setTimeout(next, upload.everyMs)
      if (taken) later()
      else req.once('drain', later)
    }
    next()
  })
}
