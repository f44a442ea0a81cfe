// `node --import tsx --import ./bench/lib/from-build.mjs bench/x.ts` (every
// bench script): the benchmarks measure the platform as `npm start` and a
// deployment run it, from the build in dist/ (from-build-hooks.mjs), its
// worker threads too. The build is brought up to date first when a source is
// newer than it, so a benchmark never mixes a stale build with new sources.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { register } from 'node:module'
import path from 'node:path'
import { PRODUCT_FOLDERS } from './from-build-hooks.mjs'

const ROOT = path.resolve(import.meta.dirname, '../..')

/** The first product source newer than its build (or without one), if any. */
function staleSource() {
  for (const folder of PRODUCT_FOLDERS) {
    for (const entry of fs.readdirSync(path.join(ROOT, folder), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.d.ts')) continue
      const source = path.join(entry.parentPath, entry.name)
      const built = path.join(ROOT, 'dist', path.relative(ROOT, source)).replace(/\.ts$/, '.js')
      try {
        if (fs.statSync(built).mtimeMs >= fs.statSync(source).mtimeMs) continue
      } catch {
        // No build of it yet.
      }
      return path.relative(ROOT, source)
    }
  }
  return undefined
}

const stale = staleSource()
if (stale !== undefined) {
  process.stderr.write(`bench: ${stale} is newer than its build; building (tsc -p tsconfig.build.json)\n`)
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' })
}
register('./from-build-hooks.mjs', import.meta.url)
// The platform's worker threads load their modules from the build too (lib/thread-module.ts).
process.env.BASEPLANE_THREADS_FROM_BUILD = '1'
