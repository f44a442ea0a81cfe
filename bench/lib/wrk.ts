// Runs wrk (Debian package `wrk`) against a URL and reads its figures.
import { execFile } from 'node:child_process'

export interface LoadResult {
  requestsPerSecond: number
  /** Requests answered in the whole run. */
  requests: number
  p50Ms: number
  p99Ms: number
  non2xx: number
}

function toMs(value: string, unit: string): number {
  const n = Number(value)
  return unit === 'us' ? n / 1000 : unit === 's' ? n * 1000 : n
}

export function wrk(url: string, options: { headers?: Record<string, string>; seconds?: number; connections?: number; threads?: number; script?: string } = {}): Promise<LoadResult> {
  const args = [`-t${options.threads ?? 1}`, `-c${options.connections ?? 64}`, `-d${options.seconds ?? 10}s`, '--latency']
  for (const [name, value] of Object.entries(options.headers ?? {})) args.push('-H', `${name}: ${value}`)
  if (options.script) args.push('-s', options.script)
  args.push(url)
  return new Promise((resolve, reject) => {
    execFile('wrk', args, { maxBuffer: 1 << 20 }, (error, stdout) => {
      if (error) {
        reject(new Error(`wrk failed (is the Debian package "wrk" installed?): ${error.message}`))
        return
      }
      const rps = /Requests\/sec:\s+([\d.]+)/.exec(stdout)
      const p50 = /\s50%\s+([\d.]+)(us|ms|s)/.exec(stdout)
      const p99 = /\s99%\s+([\d.]+)(us|ms|s)/.exec(stdout)
      const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)
      const requests = /(\d+) requests in /.exec(stdout)
      if (!rps || !p50 || !p99 || !requests) {
        reject(new Error(`could not read wrk output:\n${stdout}`))
        return
      }
      resolve({
        requestsPerSecond: Number(rps[1]),
        requests: Number(requests[1]),
        p50Ms: toMs(p50[1]!, p50[2]!),
        p99Ms: toMs(p99[1]!, p99[2]!),
        non2xx: non2xx ? Number(non2xx[1]) : 0,
      })
    })
  })
}

export function formatLoad(name: string, result: LoadResult): string {
  return `${name.padEnd(34)} ${result.requestsPerSecond.toFixed(0).padStart(8)} req/s   p50 ${result.p50Ms.toFixed(2).padStart(6)} ms   p99 ${result.p99Ms.toFixed(2).padStart(6)} ms${result.non2xx ? `   (${result.non2xx} non-2xx!)` : ''}`
}
