// Where a module that runs on a thread of its own lives, and how that thread
// loads it. Compiled (dist/) it is the .js file beside its caller. From
// source (tests and benchmarks, under tsx) it is the .ts file, which the
// thread loads through tsx as the process does, unless
// BASEPLANE_THREADS_FROM_BUILD=1 says the build in dist/ is current (`npm test`
// builds it first): then the thread loads the compiled file, without tsx or
// the test runner's hooks. Each platform a test starts runs several threads,
// and loading a thread's modules through tsx costs it about three times as
// much as loading them compiled: most of a short test's time on two cores.
import { fileURLToPath, pathToFileURL } from 'node:url'
import path from 'node:path'

export const fromSource = import.meta.url.endsWith('.ts')

/** Threads load dist/'s compiled files although this process runs the sources. */
export const threadsFromBuild = fromSource && process.env.BASEPLANE_THREADS_FROM_BUILD === '1'

const root = fileURLToPath(new URL('..', import.meta.url))

/** `relative` (no extension) resolved against `base` (the caller's import.meta.url), in the form threads load. */
export function threadModule(relative: string, base: string): URL {
  if (!fromSource) return new URL(`${relative}.js`, base)
  const source = fileURLToPath(new URL(`${relative}.ts`, base))
  if (!threadsFromBuild) return pathToFileURL(source)
  return pathToFileURL(path.join(root, 'dist', path.relative(root, source)).replace(/\.ts$/, '.js'))
}

/**
 * Piscina's CommonJS worker tries `require()` on a task module before
 * `import()`. On Node 22, require() of an ES module that another task on the
 * thread is importing at the same moment aborts the whole process (V8's
 * "IsGraphAsync must be used on an instantiated module", seen when a node is
 * stopped while its threads still load): with require of ES modules off in
 * the threads, Piscina takes its import() path, which loads a module once.
 */
const NO_REQUIRE_ESM = '--no-experimental-require-module'

/** The execArgv a thread needs to load threadModule()'s files. */
const loaderArgv: string[] = !fromSource
  ? process.execArgv
  : threadsFromBuild
    ? []
    : process.execArgv.some((arg) => arg.includes('tsx'))
      ? process.execArgv
      : [...process.execArgv, '--import', 'tsx']

export const threadExecArgv: string[] = loaderArgv.includes(NO_REQUIRE_ESM) ? loaderArgv : [...loaderArgv, NO_REQUIRE_ESM]

/**
 * Asks a supervised thread to stop (its own `{kind: 'stop'}` message, so it
 * settles what it holds) and waits for it to exit, ending it after
 * `ceilingMs` if it has not: a stop never hangs on a thread.
 */
export async function stopThread(worker: { once(event: 'exit', listener: () => void): unknown; postMessage(message: { kind: 'stop' }): void; terminate(): Promise<number> }, ceilingMs: number): Promise<void> {
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
  worker.postMessage({ kind: 'stop' })
  const ceiling = setTimeout(() => void worker.terminate(), ceilingMs)
  await exited
  clearTimeout(ceiling)
}
