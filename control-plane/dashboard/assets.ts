// The dashboard's static files, all served from the package (no CDN): its own
// small scripts (assets/*.js) and uPlot's dist files from node_modules.
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { PACKAGE_ROOT } from '../../lib/package-root.ts'
import type { OutgoingResponse } from '../../lib/http.ts'

const OWN = path.join(PACKAGE_ROOT, 'control-plane', 'dashboard', 'assets')
const UPLOT = path.dirname(createRequire(import.meta.url).resolve('uplot/dist/uPlot.iife.min.js'))

const FILES: Record<string, { file: string; type: string }> = {
  'dashboard.js': { file: path.join(OWN, 'dashboard.js'), type: 'text/javascript' },
  'overview.js': { file: path.join(OWN, 'overview.js'), type: 'text/javascript' },
  'charts.js': { file: path.join(OWN, 'charts.js'), type: 'text/javascript' },
  'usage.js': { file: path.join(OWN, 'usage.js'), type: 'text/javascript' },
  'graphql.js': { file: path.join(OWN, 'graphql.js'), type: 'text/javascript' },
  'rest.js': { file: path.join(OWN, 'rest.js'), type: 'text/javascript' },
  'sql.js': { file: path.join(OWN, 'sql.js'), type: 'text/javascript' },
  'users.js': { file: path.join(OWN, 'users.js'), type: 'text/javascript' },
  'push.js': { file: path.join(OWN, 'push.js'), type: 'text/javascript' },
  'realtime.js': { file: path.join(OWN, 'realtime.js'), type: 'text/javascript' },
  'storage.js': { file: path.join(OWN, 'storage.js'), type: 'text/javascript' },
  'uPlot.iife.min.js': { file: path.join(UPLOT, 'uPlot.iife.min.js'), type: 'text/javascript' },
  'uPlot.min.css': { file: path.join(UPLOT, 'uPlot.min.css'), type: 'text/css' },
}

const cache = new Map<string, string>()

/** The asset's response, or undefined for a name the dashboard does not serve. */
export function asset(name: string): OutgoingResponse | undefined {
  const entry = FILES[name]
  if (!entry || !fs.existsSync(entry.file)) return undefined
  let body = cache.get(name)
  if (body === undefined) {
    body = fs.readFileSync(entry.file, 'utf8')
    cache.set(name, body)
  }
  return {
    status: 200,
    headers: { 'content-type': `${entry.type}; charset=utf-8`, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' },
    body,
  }
}
