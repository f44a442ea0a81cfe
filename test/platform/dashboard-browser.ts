// One headless Chromium per dashboard test file: a signed-in page on a test
// platform, every request checked to stay on 127.0.0.1 (anything else is
// aborted and recorded), and a screenshot in test/artefacts/ for each failing
// subtest. Without a Chromium the file's tests are skipped, saying why.
import fs from 'node:fs'
import path from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import type { Test } from 'tap'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const ARTEFACTS = path.resolve(import.meta.dirname, '..', 'artefacts')

export interface DashboardSession {
  platform: TestPlatform
  browser: Browser
  page: Page
  /** {origin}/dashboard */
  dashboard: string
  /** Requests that tried to leave 127.0.0.1 (should stay empty). */
  offsite: string[]
  text(selector: string): Promise<string>
  signIn(page?: Page): Promise<void>
}

/** Skips the file (plan 0 with the reason) when there is no Chromium; answers false then. */
export function haveChromium(t: Test): boolean {
  if (fs.existsSync(CHROMIUM)) return true
  t.plan(0, `no Chromium at ${CHROMIUM} (install chromium or set CHROMIUM_PATH): the dashboard's browser tests are skipped`)
  return false
}

export async function dashboardSession(t: Test, name: string, env: Record<string, string> = {}): Promise<DashboardSession> {
  const platform = await startTestPlatform(t, env)
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  })
  t.teardown(() => browser.close())
  const offsite: string[] = []
  const context = await browser.newContext()
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url())
    if (url.hostname === '127.0.0.1' || url.protocol === 'data:' || url.protocol === 'blob:') return route.continue()
    offsite.push(url.href)
    return route.abort()
  })
  const page = await context.newPage()
  page.on('dialog', (dialog) => dialog.accept())
  const dashboard = `${platform.origin}/dashboard`
  let shot = 0
  t.afterEach(async (sub) => {
    if (sub.passing()) return
    fs.mkdirSync(ARTEFACTS, { recursive: true })
    const file = path.join(ARTEFACTS, `${name}-${++shot}-${sub.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}.png`)
    await page.screenshot({ path: file, fullPage: true }).catch(() => {})
    sub.comment(`screenshot: ${file}`)
  })
  const session: DashboardSession = {
    platform,
    browser,
    page,
    dashboard,
    offsite,
    text: (selector) => page.locator(selector).first().innerText(),
    signIn: async (target = page) => {
      await target.goto(dashboard)
      await target.fill('#token', platform.config.adminToken!)
      await target.click('button:has-text("Sign in")')
    },
  }
  return session
}
