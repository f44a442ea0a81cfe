// The house's layout (DESIGN.md, issue 12): imports point down only. cli/ and
// server/ at the top; control-plane/ and data-plane/ beside each other, neither
// importing the other; the concerns (workers/<concern>/) below them, never
// each other; lib/ at the bottom, importing nothing above it. client/ (what
// apps import, `baseplane/cookies`) stands apart: it loads in browsers as plain
// ES modules, so it imports its own files only (no packages, no node: modules).
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
