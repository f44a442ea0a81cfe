// Runs the real `baseplane` command line in a child process, as an operator would.
import { spawn } from 'node:child_process'

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
