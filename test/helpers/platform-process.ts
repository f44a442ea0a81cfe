// Another data-plane process, for what must hold across processes (the
// throttle's shared counts): a child Node process running the platform on the
// same catalogue, unlike startAnotherNode, which shares this process's memory.
import { spawn } from 'node:child_process'
import { baseUrlOf } from '../../lib/catalogue.ts'

interface TestContext {
  teardown(fn: () => unknown): void
}

export interface PlatformProcess {
  origin: string
  baseUrlOf(ref: string): string
  /** What the process wrote after it served: its standard error (the log) only when started with `keepOutput`. */
  output(): string
  /** SIGTERM: the process stops as `npm start` would. */
  stop(): Promise<void>
  /** SIGKILL: the process dies at once, saying goodbye to nobody (a machine lost). */
  kill(): Promise<void>
}

/** How long a child gets to compile, connect and listen on a loaded machine. */
const START_TIMEOUT_MS = 60_000

export interface PlatformProcessOptions {
  /**
   * Keep the process's standard error (its log lines) for output() instead of
   * passing it to this process's: for tests that read what a node logged. Give
   * BASEPLANE_LOG_LEVEL in `env` too, or the test configuration logs nothing.
   */
  keepOutput?: boolean
}

export async function startPlatformProcess(t: TestContext, catalogueUrl: string, env: Record<string, string> = {}, options: PlatformProcessOptions = {}): Promise<PlatformProcess> {
  // The level from the start, not only once the platform has read its configuration (npm test runs with silent).
  const logLevel = env.BASEPLANE_LOG_LEVEL === undefined ? {} : { BASEPLANE_LOG_LEVEL: env.BASEPLANE_LOG_LEVEL }
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/platform-process-main.ts'], {
    env: { ...process.env, ...logLevel, CATALOGUE_URL: catalogueUrl, PLATFORM_ENV: JSON.stringify(env) },
    stdio: ['ignore', 'pipe', options.keepOutput ? 'pipe' : 'inherit'],
  })
  let kept = ''
  child.stderr?.on('data', (chunk: Buffer) => (kept += chunk.toString('utf8')))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  let stopping: Promise<void> | undefined
  const stop = () =>
    (stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      await exited
    })())
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await exited
  }
  // Registered after the platform's own teardown, so it runs first (tap runs them last in, first out).
  t.teardown(stop)
  let out = ''
  const started = await new Promise<{ publicUrl: string; baseDomain?: string }>((resolve, reject) => {
    let served = false
    const timer = setTimeout(() => reject(new Error(`the platform process did not start within ${START_TIMEOUT_MS} ms${kept ? `:\n${kept}` : ''}`)), START_TIMEOUT_MS)
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8')
      if (served) return
      const line = out.split('\n').find((l) => l.startsWith('{'))
      if (line === undefined) return
      served = true
      out = out.slice(out.indexOf(line) + line.length + 1)
      clearTimeout(timer)
      resolve(JSON.parse(line) as { publicUrl: string; baseDomain?: string })
    })
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`the platform process exited with code ${code} before it served${kept ? `:\n${kept}` : ''}`))
    })
  })
  return { origin: started.publicUrl, baseUrlOf: (ref) => baseUrlOf(ref, started.publicUrl, started.baseDomain), output: () => out + kept, stop, kill }
}
