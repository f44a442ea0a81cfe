// Where a module that runs on a thread of its own lives, and how that thread
// loads it. Compiled (dist/) it is the .js file beside its caller; from
// source (tests and benchmarks, under tsx) it is the .ts file, which the
// thread loads through tsx as the process does.
export const fromSource = import.meta.url.endsWith('.ts')

/** `relative` (no extension) resolved against `base` (the caller's import.meta.url), with the extension in use. */
export function threadModule(relative: string, base: string): URL {
  return new URL(`${relative}.${fromSource ? 'ts' : 'js'}`, base)
}

/** The execArgv a thread needs to load threadModule()'s files. */
export const threadExecArgv: string[] =
  !fromSource || process.execArgv.some((arg) => arg.includes('tsx')) ? process.execArgv : [...process.execArgv, '--import', 'tsx']
