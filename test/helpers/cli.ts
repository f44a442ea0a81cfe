// Runs the real `baseplane` command line in a child process, as an operator would.
import { spawn, type ChildProcess } from 'node:child_process'
import { freePort } from '../../lib/db/embedded.ts'

export interface CliRun {
  code: number
  stdout: string
  stderr: string
}

/** `baseplane ...args` with `env` over this process's environment; `input` goes to its standard input. */
export function runCli(args: string[], env: Record<string, string>, input = ''): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/baseplane.mjs', ...args], { env: { ...process.env, ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => (stdout += c))
    child.stderr.on('data', (c: Buffer) => (stderr += c))
    child.stdin.end(input)
    child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }))
  })
}

export interface Served {
  child: ChildProcess
  output(): string
  /** Resolves with how it ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/**
 * `baseplane start ...args` on `node` (exactly `env`, not this process's environment, so
 * no DATABASE_URL leaks in): resolves once it says "Press Ctrl-C to stop.",
 * rejects with its output if it exits first or takes longer than `timeoutMs`.
 */
export function startCli(args: string[], env: Record<string, string>, timeoutMs = 60000, node = process.execPath): Promise<Served> {
  const child = spawn(node, ['bin/baseplane.mjs', 'start', ...args], { env })
  let output = ''
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`baseplane start did not come up:\n${output}`)), timeoutMs)
    const onData = (chunk: Buffer) => {
      output += chunk
      if (output.includes('Press Ctrl-C to stop.')) {
        clearTimeout(timer)
        resolve({ child, output: () => output, exited })
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    void exited.then(({ code, signal }) => {
      clearTimeout(timer)
      reject(new Error(`baseplane start exited (${code ?? signal}) before it came up:\n${output}`))
    })
  })
}

/**
 * `startCli` on a port picked here (PORT in `env` is replaced): a free port
 * can be taken by another process between the pick and the listen, so a start
 * that fails with EADDRINUSE is tried again on another one.
 */
export async function startCliOnFreePort(args: string[], env: Record<string, string>, timeoutMs = 60000, node = process.execPath): Promise<Served> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startCli(args, { ...env, PORT: String(await freePort()) }, timeoutMs, node)
    } catch (error) {
      if (attempt === 3 || !String(error).includes('EADDRINUSE')) throw error
    }
  }
}

/**
 * Runs several independent command lines, a few at a time (each is mostly
 * Node starting up), and answers in the order given.
 */
export async function runCliEach(runs: Array<{ args: string[]; input?: string }>, env: Record<string, string>, atOnce = 3): Promise<CliRun[]> {
  const results: CliRun[] = new Array(runs.length)
  let next = 0
  const lane = async () => {
    while (next < runs.length) {
      const i = next++
      results[i] = await runCli(runs[i]!.args, env, runs[i]!.input)
    }
  }
  await Promise.all(Array.from({ length: Math.min(atOnce, runs.length) }, lane))
  return results
}
