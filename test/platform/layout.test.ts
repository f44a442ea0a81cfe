// The house's layout (DESIGN.md, issue 12): imports point down only. cli/ and
// server/ at the top; control-plane/ and data-plane/ beside each other, neither
// importing the other; the concerns (workers/<concern>/) below them, never
// each other; lib/ at the bottom, importing nothing above it. client/ (what
// apps import, `baseplane/cookies`) stands apart: it loads in browsers as plain
// ES modules, so it imports its own files only (no packages, no node: modules).
//
// Issue 26 items 4 and 5: the control plane and the CLI reach a concern only
// through its face (workers/<concern>/face.ts); the control plane's operations
// (control-plane/*.ts) import nothing of the HTTP layer (lib/http*, admin-api/,
// dashboard/); and no module of the control plane imports, even for a type,
// one that imports it back.
//
// Issue 37 item 2: no module anywhere value-imports one that value-imports it
// back (type-only imports may meet: they vanish when the code runs).
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'

const ROOT = path.resolve(import.meta.dirname, '../..')
const LEVEL: Record<string, number> = { lib: 0, workers: 1, 'control-plane': 2, 'data-plane': 2, server: 3, cli: 4 }
const IMPORT = /(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g

function sources(folder: string): string[] {
  const found: string[] = []
  for (const entry of fs.readdirSync(path.join(ROOT, folder), { withFileTypes: true })) {
    const relative = path.join(folder, entry.name)
    if (entry.isDirectory()) found.push(...sources(relative))
    else if (entry.name.endsWith('.ts')) found.push(relative)
  }
  return found
}

/** Every relative import that breaks the rule, as "file -> import". */
function violations(): string[] {
  const found: string[] = []
  for (const folder of Object.keys(LEVEL)) {
    for (const file of sources(folder)) {
      for (const [, specifier] of fs.readFileSync(path.join(ROOT, file), 'utf8').matchAll(IMPORT)) {
        const target = path.normalize(path.join(path.dirname(file), specifier!))
        const [from, to] = [file.split(path.sep)[0]!, target.split(path.sep)[0]!]
        if (LEVEL[to] === undefined) continue
        const upward = from !== to && LEVEL[to]! >= LEVEL[from]!
        const otherConcern = from === 'workers' && to === 'workers' && file.split(path.sep)[1] !== target.split(path.sep)[1]
        if (upward || otherConcern) found.push(`${file} -> ${specifier}`)
      }
    }
  }
  return found
}

const ANY_IMPORT = /(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g

/** Every import of a client/ file that leaves client/. */
function clientViolations(): string[] {
  const found: string[] = []
  for (const file of sources('client')) {
    for (const [, specifier] of fs.readFileSync(path.join(ROOT, file), 'utf8').matchAll(ANY_IMPORT)) {
      const inside = specifier!.startsWith('.') && path.normalize(path.join(path.dirname(file), specifier!)).split(path.sep)[0] === 'client'
      if (!inside) found.push(`${file} -> ${specifier}`)
    }
  }
  return found
}

t.test('imports point down only', async (t) => {
  t.same(violations(), [])
})

/** Imports that leave what the package ships for dev/, bench/ or test/, and dev/'s imports of anything but lib/. */
function devViolations(): string[] {
  const found: string[] = []
  for (const folder of [...Object.keys(LEVEL), 'dev']) {
    for (const file of sources(folder)) {
      for (const [, specifier] of fs.readFileSync(path.join(ROOT, file), 'utf8').matchAll(IMPORT)) {
        const to = path.normalize(path.join(path.dirname(file), specifier!)).split(path.sep)[0]!
        const shippedLeaving = folder !== 'dev' && ['dev', 'bench', 'test'].includes(to)
        const devReaching = folder === 'dev' && to !== 'dev' && to !== 'lib'
        if (shippedLeaving || devReaching) found.push(`${file} -> ${specifier}`)
      }
    }
  }
  return found
}

t.test('what ships never imports dev/, bench/ or test/; dev/ imports only lib/', async (t) => {
  t.same(devViolations(), [])
})

t.test('the check sees an upward import', async (t) => {
  const probe = path.join(ROOT, 'lib', `.layout-probe-${process.pid}.ts`)
  fs.writeFileSync(probe, "import { Dispatcher } from '../data-plane/dispatcher.ts'\nexport { Dispatcher }\n")
  t.teardown(() => fs.rmSync(probe, { force: true }))
  t.same(violations(), [`lib/.layout-probe-${process.pid}.ts -> ../data-plane/dispatcher.ts`])
})

t.test('client/ imports its own files only', async (t) => {
  t.same(clientViolations(), [])
  const probe = path.join(ROOT, 'client', `.layout-probe-${process.pid}.ts`)
  fs.writeFileSync(probe, "import { Buffer } from 'node:buffer'\nimport { BaseplaneError } from '../lib/errors.ts'\nexport { Buffer, BaseplaneError }\n")
  t.teardown(() => fs.rmSync(probe, { force: true }))
  t.same(clientViolations(), [`client/.layout-probe-${process.pid}.ts -> node:buffer`, `client/.layout-probe-${process.pid}.ts -> ../lib/errors.ts`])
})

/** A file's relative imports, resolved to paths from the root (type imports and re-exports included). */
function importsOf(file: string): string[] {
  return [...fs.readFileSync(path.join(ROOT, file), 'utf8').matchAll(IMPORT)].map(([, specifier]) => path.normalize(path.join(path.dirname(file), specifier!)))
}

const FACE = /^workers\/[^/]+\/face\.ts$/

/** Every import of a workers/ module other than a concern's face, from control-plane/ or cli/. */
function faceViolations(): string[] {
  const found: string[] = []
  for (const file of [...sources('control-plane'), ...sources('cli')]) {
    for (const target of importsOf(file)) {
      const posix = target.split(path.sep).join('/')
      if (posix.startsWith('workers/') && !FACE.test(posix)) found.push(`${file} -> ${posix}`)
    }
  }
  return found
}

t.test('the control plane and the CLI reach a concern only through its face', async (t) => {
  t.same(faceViolations(), [])
  for (const concern of ['auth', 'push', 'graphql']) t.ok(fs.existsSync(path.join(ROOT, 'workers', concern, 'face.ts')), `workers/${concern}/face.ts`)
  const probe = path.join(ROOT, 'cli', `.layout-probe-${process.pid}.ts`)
  fs.writeFileSync(probe, "import { NUMERIC_SETTINGS } from '../workers/auth/face.ts'\nimport { pushErrors } from '../workers/push/errors.ts'\nexport { NUMERIC_SETTINGS, pushErrors }\n")
  t.teardown(() => fs.rmSync(probe, { force: true }))
  t.same(faceViolations(), [`cli/.layout-probe-${process.pid}.ts -> workers/push/errors.ts`])
})

/** The operation modules (control-plane/*.ts): nothing of the HTTP layer. */
const HTTP_LAYER = [/^lib\/http(\.ts|\/)/, /^control-plane\/admin-api\//, /^control-plane\/dashboard\//]

function operationViolations(): string[] {
  const found: string[] = []
  for (const entry of fs.readdirSync(path.join(ROOT, 'control-plane'))) {
    if (!entry.endsWith('.ts')) continue
    const file = path.join('control-plane', entry)
    for (const target of importsOf(file)) {
      const posix = target.split(path.sep).join('/')
      if (HTTP_LAYER.some((layer) => layer.test(posix))) found.push(`${file} -> ${posix}`)
    }
  }
  return found
}

t.test("the control plane's operations import nothing of the HTTP layer", async (t) => {
  t.same(operationViolations(), [])
  const probe = path.join(ROOT, 'control-plane', `.layout-probe-${process.pid}.ts`)
  fs.writeFileSync(probe, "import type { AdminRoute } from './admin-api/route.ts'\nexport type { AdminRoute }\n")
  t.teardown(() => fs.rmSync(probe, { force: true }))
  t.same(operationViolations(), [`control-plane/.layout-probe-${process.pid}.ts -> control-plane/admin-api/route.ts`])
})

/** A file's value imports: relative imports and re-exports that are not `import type`, `export type` or all `type` names. */
function valueImportsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8')
  const found: string[] = []
  for (const [, keyword, typeOnly, clause, specifier, dynamic] of text.matchAll(STATEMENT)) {
    if (typeOnly !== undefined) continue
    const named = /^\{([\s\S]*)\}$/.exec(clause?.trim() ?? '')
    const names = named ? named[1]!.split(',').map((name) => name.trim()).filter(Boolean) : []
    if (keyword !== undefined && names.length > 0 && names.every((name) => name.startsWith('type '))) continue
    found.push(path.normalize(path.join(path.dirname(file), (specifier ?? dynamic)!)))
  }
  return found
}

const STATEMENT = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"](\.{1,2}\/[^'"]+)['"]|import\s*\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g

/**
 * Each import cycle among `files` along `edges`, as "a -> b -> a" (one per
 * cycle found by a depth-first walk).
 */
function cyclesAmong(files: Set<string>, edges: (file: string) => string[]): string[] {
  const graph = new Map([...files].map((file) => [file, edges(file).filter((target) => files.has(target))]))
  const state = new Map<string, 'open' | 'done'>()
  const found: string[] = []
  const walk = (file: string, trail: string[]) => {
    state.set(file, 'open')
    for (const next of graph.get(file)!) {
      if (state.get(next) === 'open') found.push([...trail.slice(trail.indexOf(next)), file, next].join(' -> '))
      else if (!state.has(next)) walk(next, [...trail, file])
    }
    state.set(file, 'done')
  }
  for (const file of [...files].sort()) if (!state.has(file)) walk(file, [])
  return found
}

/** Each import cycle among the files of `folder`, type imports included. */
const cycles = (folder: string): string[] => cyclesAmong(new Set(sources(folder)), importsOf)

/** Each value-import cycle among every module of the code (all folders: across them, too). */
const valueCycles = (): string[] => cyclesAmong(new Set([...Object.keys(LEVEL), 'client', 'dev'].flatMap(sources)), valueImportsOf)

t.test('no import cycles in the control plane, type imports included', async (t) => {
  t.same(cycles('control-plane'), [])
  const a = path.join('control-plane', `.layout-probe-a-${process.pid}.ts`)
  const b = path.join('control-plane', `.layout-probe-b-${process.pid}.ts`)
  fs.writeFileSync(path.join(ROOT, a), `import type { B } from './${path.basename(b)}'\nexport type A = B\n`)
  fs.writeFileSync(path.join(ROOT, b), `import type { A } from './${path.basename(a)}'\nexport type B = A | 1\n`)
  t.teardown(() => {
    fs.rmSync(path.join(ROOT, a), { force: true })
    fs.rmSync(path.join(ROOT, b), { force: true })
  })
  t.same(cycles('control-plane'), [`${a} -> ${b} -> ${a}`])
})

t.test('no value-import cycles anywhere; type-only imports may meet', async (t) => {
  t.same(valueCycles(), [])
  const a = path.join('workers', 'rest', `.layout-probe-a-${process.pid}.ts`)
  const b = path.join('workers', 'rest', `.layout-probe-b-${process.pid}.ts`)
  const c = path.join('workers', 'rest', `.layout-probe-c-${process.pid}.ts`)
  fs.writeFileSync(path.join(ROOT, a), `import { b } from './${path.basename(b)}'\nimport type { C } from './${path.basename(c)}'\nexport const a = (x: C) => b + x\n`)
  fs.writeFileSync(path.join(ROOT, b), `import { type A, a } from './${path.basename(a)}'\nexport const b = 1\nexport const f = a\nexport type B = A\n`)
  fs.writeFileSync(path.join(ROOT, c), `import { type a } from './${path.basename(a)}'\nexport type C = number\nexport type D = typeof a\n`)
  t.teardown(() => {
    for (const file of [a, b, c]) fs.rmSync(path.join(ROOT, file), { force: true })
  })
  // a and b import each other's values; c takes only a type back from a.
  t.same(valueCycles(), [`${a} -> ${b} -> ${a}`])
})
