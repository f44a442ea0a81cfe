// The fleet's usage in the dashboard and the admin API (issue 27 item 2,
// issue 28 item 5), against two nodes on one catalogue in this process: the
// Usage tab's month against the plan's quotas, its totals and its charts per
// day; the Overview's charts read from the catalogue (both nodes' counts, the
// hours rolled up and the minutes not yet), the push deliveries chart among
// them, the Data API's requests in the requests charts (issue 37 item 8); `GET
// /platform/v1/projects/{ref}/usage/recent` and its refusals; and
// every chart canvas inside its card at 1280x800 and 390x844 in Chromium.
// The flush timer is an hour: each node flushes when the test says.
import t from 'tap'
import type { Page } from 'playwright-core'
import { setAuthOptions } from '../../control-plane/auth-settings.ts'
import { sampleDatabaseSizes, rollUpUsage } from '../../control-plane/usage-upkeep.ts'
import type { RecentUsageView } from '../../control-plane/usage-charts.ts'
import { USAGE_COUNTERS } from '../../lib/metrics/usage-counters.ts'
import { planQuotas } from '../../lib/plans.ts'
import { request, type ErrorBody } from '../helpers/http.ts'
import { dashboardSession, haveChromium } from './dashboard-browser.ts'

const HOUR_MS = 3_600_000

if (haveChromium(t)) {
  const { platform: fx, page, dashboard, offsite, text, signIn } = await dashboardSession(t, 'dashboard-usage', { BASEPLANE_USAGE_FLUSH_MS: '3600000' })
  const { controlPlane } = fx.platform
  const catalogue = controlPlane.catalogue
  const admin = `${fx.origin}/platform/v1`
  const adminAuth = { authorization: `Bearer ${fx.config.adminToken}` }
  const project = await fx.createProject({ name: 'Metered', auth: true })
  const { ref } = project
  await setAuthOptions(controlPlane, ref, { mailer_autoconfirm: true })
  const b = await fx.startAnotherNode()
  const throughB = `http://127.0.0.1:${b.port}/project/${ref}`
  const auth = async (base: string, path: string, body: object) => {
    const reply = await request<{ access_token?: string }>(`${base}/auth/v1${path}`, { headers: { apikey: project.anonKey }, body })
    // A fixture that fails throws: assertions before the first subtest would end tap's root test early.
    if (!reply.json?.access_token) throw new Error(`${path}: ${reply.status} ${reply.text}`)
  }
  // Node A (the dashboard's): two users sign up and in. Node B: one of them signs in three times.
  const ada = { email: 'ada@example.test', password: 'secret-password' }
  await auth(project.baseUrl, '/signup', ada)
  await auth(project.baseUrl, '/signup', { email: 'bob@example.test', password: 'secret-password' })
  for (let i = 0; i < 3; i++) await auth(throughB, '/token?grant_type=password', ada)
  // The Data API, the busiest service: four requests through A, two through B.
  const rest = async (base: string) => {
    const reply = await request(`${base}/rest/v1/`, { headers: { apikey: project.anonKey } })
    if (reply.status !== 200) throw new Error(`rest: ${reply.status} ${reply.text}`)
  }
  for (let i = 0; i < 4; i++) await rest(project.baseUrl)
  for (let i = 0; i < 2; i++) await rest(throughB)
  await fx.platform.usage!.flush()
  await b.usage!.flush()
  // What an earlier rollup left: this hour's push deliveries (in its hour and its day), and GraphQL requests two hours ago.
  const now = Date.now()
  const thisHour = new Date(Math.floor(now / HOUR_MS) * HOUR_MS)
  const twoHoursAgo = new Date(thisHour.getTime() - 2 * HOUR_MS)
  const pushed = { push_fcm_sent: 7, push_fcm_failed: 2, push_apns_sent: 5 }
  for (const [counter, value] of Object.entries(pushed)) {
    await catalogue.query('insert into baseplane.usage_hours (ref, hour, counter, value) values ($1, $2, $3, $4)', [ref, thisHour, counter, value])
    await catalogue.query(`insert into baseplane.usage_days (ref, day, counter, value) values ($1, ($2::timestamptz at time zone 'UTC')::date, $3, $4)`, [ref, thisHour, counter, value])
  }
  await catalogue.query('insert into baseplane.usage_hours (ref, hour, counter, value) values ($1, $2, $3, $4)', [ref, twoHoursAgo, 'requests_graphql', 11])
  await sampleDatabaseSizes(controlPlane)
  const month = new Date(now).toISOString().slice(0, 7)
  await signIn()

  const total = (view: RecentUsageView, counter: string) => view.points.reduce((n, point) => n + point.counters[counter]!, 0)
  const at = (view: RecentUsageView, hour: Date) => view.points.find((point) => point.start === hour.toISOString())

  t.test('usage/recent answers the fleet per hour: both nodes, the hours rolled up and the minutes not yet, each counted once', async (t) => {
    const first = await request<RecentUsageView>(`${admin}/projects/${ref}/usage/recent?hours=3`, { headers: adminAuth })
    t.equal(first.status, 200)
    const view = first.json
    t.match(view, { ref, hours: 3, from: twoHoursAgo.toISOString(), to: new Date(thisHour.getTime() + HOUR_MS).toISOString() })
    t.same(
      view.points.map((point) => point.start),
      [0, 1, 2].map((i) => new Date(twoHoursAgo.getTime() + i * HOUR_MS).toISOString()),
    )
    t.equal(total(view, 'requests_auth'), 5, "A's 2 sign-ups and B's 3 sign-ins")
    t.equal(total(view, 'auth_sign_ins'), 5)
    t.match(at(view, thisHour)!.counters, pushed, "this hour's rolled-up deliveries")
    t.equal(at(view, twoHoursAgo)!.counters.requests_graphql, 11, 'an earlier hour')
    t.equal(total(view, 'requests_graphql'), 11)
    t.equal(total(view, 'requests_rest'), 6, "the Data API's requests, both nodes")
    t.same(Object.keys(view.points[0]!.counters), USAGE_COUNTERS, 'every counter, 0 when none')

    // Rolling every minute up moves the counts from minutes to hours: the same figures, none twice.
    await rollUpUsage(controlPlane, Date.now() + 60_000)
    const rolled = (await request<RecentUsageView>(`${admin}/projects/${ref}/usage/recent?hours=3`, { headers: adminAuth })).json
    t.same(rolled.minutes, [], 'no minute left to roll up')
    t.equal(total(rolled, 'requests_auth'), 5)
    t.equal(total(rolled, 'auth_sign_ins'), 5)
    t.same(rolled.points, view.points)

    const defaults = (await request<RecentUsageView>(`${admin}/projects/${ref}/usage/recent`, { headers: adminAuth })).json
    t.equal(defaults.points.length, 24, '24 hours by default')
    t.equal(total(defaults, 'requests_auth'), 5)
  })

  t.test('usage/recent refuses bad input in the admin API shape', async (t) => {
    const hours = (got: string) => ({ code: 'invalid_argument', message: `hours must be a whole number from 1 to 168, got ${JSON.stringify(got)}` })
    const refusals: Array<[string, number, ErrorBody]> = [
      [`/projects/${ref}/usage/recent?hours=0`, 400, hours('0')],
      [`/projects/${ref}/usage/recent?hours=169`, 400, hours('169')],
      [`/projects/${ref}/usage/recent?hours=abc`, 400, hours('abc')],
      [`/projects/${ref}/usage/recent?hours=-1`, 400, hours('-1')],
      [`/projects/${ref}/usage/recent?hours=2.5`, 400, hours('2.5')],
      [`/projects/${ref}/usage/recent?hours=`, 400, hours('')],
      [`/projects/Not_A_Ref/usage/recent`, 404, { code: 'not_found', message: 'No route for /platform/v1/projects/Not_A_Ref/usage/recent' }],
      [`/projects/nosuchproject/usage/recent`, 404, { code: 'project_not_found', message: 'Project "nosuchproject" not found' }],
    ]
    for (const [path, status, body] of refusals) {
      const reply = await request<ErrorBody>(`${admin}${path}`, { headers: adminAuth })
      t.same({ status: reply.status, body: reply.json }, { status, body }, path)
    }
    const unauthorized = await request<ErrorBody>(`${admin}/projects/${ref}/usage/recent`)
    t.same({ status: unauthorized.status, code: unauthorized.json.code }, { status: 401, code: 'unauthorized' })
  })

  t.test("the Usage tab: the month's figures against the plan's quotas", async (t) => {
    await page.setViewportSize({ width: 1280, height: 800 })
    await page.goto(`${dashboard}/projects/${ref}`)
    await page.click('nav.tabs a:has-text("Usage")')
    t.equal(await page.title(), 'Usage · Metered · Baseplane')
    t.equal(await text('#usage-month'), month)
    t.equal(await page.inputValue('#month'), month)
    const cell = async (selector: string) => ({ value: await page.getAttribute(selector, 'data-value'), text: (await text(selector)).trim() })
    const free = planQuotas('free').figures
    t.same(await cell('#quota-monthly_active_users .used'), { value: '2', text: '2' }, 'two users, one seen by both nodes')
    t.same(await cell('#quota-monthly_active_users .figure'), { value: String(free.monthly_active_users), text: free.monthly_active_users!.toLocaleString('en-US') })
    t.same(await cell('#quota-push_deliveries .used'), { value: '12', text: '12' }, 'sent through FCM and APNs')
    t.same(await cell('#quota-mail_sent .used'), { value: '0', text: '0' })
    const { rows } = await catalogue.query<{ bytes: string }>('select last_bytes::text as bytes from baseplane.usage_database_sizes where ref = $1', [ref])
    t.equal(await page.getAttribute('#quota-database_size_bytes .used', 'data-value'), rows[0]!.bytes, 'the latest size sample')
    t.match(await text('#quota-database_size_bytes .used'), /^\d+\.\d MB$/)
    t.match(await text('#quota-policy'), /Plan free: .*refused.*\(cap\)/)
    const counter = (name: string) => page.getAttribute(`[data-counter=${name}]`, 'data-value')
    t.equal(await counter('requests_auth'), '5', 'both nodes')
    t.equal(await counter('auth_sign_ins'), '5')
    t.equal(await counter('push_fcm_sent'), '7')
    t.equal(await counter('push_fcm_failed'), '2')
    t.equal(await counter('push_apns_sent'), '5')
    t.equal(await page.getAttribute('#active-users', 'data-value'), '2')
    t.equal(await counter('requests_rest'), '6', "the Data API's requests, both nodes")
    t.equal(await text('tr:has([data-counter=requests_rest]) th'), 'Data API (REST)', 'named as the service it is')
    await page.waitForSelector('#chart-days-requests canvas')
    t.match(await seriesAtLatest(page, '#chart-days-requests'), { 'Data API (REST)': '6', Auth: '5' }, "today's requests per service, the Data API's among them")
    t.same(await page.locator('#usage-charts figure').evaluateAll((cards) => cards.map((card) => card.id)), [
      'chart-days-requests',
      'chart-days-auth',
      'chart-days-push',
      'chart-days-size',
    ])
    const today = await page.evaluate(async (url) => (await (await fetch(url)).json()) as { days: Array<{ date: string; counters: Record<string, number> }> }, `/dashboard/projects/${ref}/usage.json?month=${month}`)
    t.match(today.days.at(-1), { date: new Date(now).toISOString().slice(0, 10), counters: { requests_auth: 5, push_fcm_sent: 7 } }, 'the charts read today')
  })

  t.test('the Usage tab reads a past month, and refuses a month that is not one beside the selector', async (t) => {
    await page.goto(`${dashboard}/projects/${ref}/usage?month=2020-01`)
    t.equal(await text('#usage-month'), '2020-01')
    t.equal(await page.getAttribute('[data-counter=requests_auth]', 'data-value'), '0')
    t.equal(await page.getAttribute('#quota-monthly_active_users .used', 'data-value'), '0')
    t.equal(await page.getAttribute('#month-previous', 'href'), `/dashboard/projects/${ref}/usage?month=2019-12`)
    const refused = await page.goto(`${dashboard}/projects/${ref}/usage?month=2020-13`)
    t.equal(refused!.status(), 400)
    t.equal(await text('#month-error'), 'month must be written YYYY-MM (such as 2026-11), got "2020-13"')
    t.equal(await page.getAttribute('#month', 'aria-invalid'), 'true')
    t.equal(await page.locator('[data-counter]').count(), 0, 'no figures for a month that is not one')
  })

  t.test('the Overview draws the fleet from the catalogue, push deliveries included', async (t) => {
    await page.goto(`${dashboard}/projects/${ref}`)
    await page.waitForSelector('#chart-push canvas')
    t.same(await page.locator('#fleet-charts figure').evaluateAll((cards) => cards.map((card) => card.id)), ['chart-fleet-requests', 'chart-fleet-auth', 'chart-push'])
    t.match(await text('#chart-push figcaption'), 'Push deliveries')
    const legend = await page.locator('#chart-push .u-legend .u-label').allInnerTexts()
    t.same(legend.slice(1), ['APNs sent', 'FCM sent', 'FCM failed'], 'a series per provider and outcome counted')
    const requests = await seriesAtLatest(page, '#chart-fleet-requests')
    t.match(requests, { 'Data API (REST)': '6', Auth: '5' }, "this hour's requests per service, the Data API's among them")
    t.equal(await text('#product-rest'), 'Data API (REST): on', 'the Products line names the Data API, always on')
    t.match(await text('#next-steps'), /the Data API serves them at once \(supabase\.from\('table'\), try it under REST\)/, 'and the next steps')
    t.equal(await page.getAttribute('#next-steps a:has-text("REST")', 'href'), `/dashboard/projects/${ref}/rest`)
    const fleet = await page.evaluate(async (url) => (await (await fetch(url)).json()) as RecentUsageView, `/dashboard/projects/${ref}/usage-recent.json?hours=24`)
    t.equal(total(fleet, 'requests_auth'), 5, 'the charts read both nodes')
    t.equal(at(fleet, thisHour)!.counters.push_fcm_sent, 7)
    await page.waitForSelector('#chart-requests canvas')
    t.match(await text('#chart-requests figcaption'), 'this node')
  })

  /** A chart's legend with the cursor on its latest point: each series' label and the value it shows there. */
  async function seriesAtLatest(target: Page, chart: string): Promise<Record<string, string>> {
    const over = target.locator(`${chart} .u-over`)
    const box = (await over.boundingBox())!
    await over.hover({ position: { x: box.width - 1, y: box.height / 2 } })
    const rows = await target.locator(`${chart} .u-legend .u-series`).evaluateAll((series) =>
      series.slice(1).map((row) => [row.querySelector('.u-label')!.textContent!, row.querySelector('.u-value')!.textContent!] as const),
    )
    await target.mouse.move(0, 0)
    return Object.fromEntries(rows)
  }

  /** Every chart card's canvas and legend against the card's content box. */
  async function chartFits(target: Page) {
    return target.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('figure.chart')].map((card) => {
        const style = getComputedStyle(card)
        const box = card.getBoundingClientRect()
        const left = box.left + parseFloat(style.borderLeftWidth) + parseFloat(style.paddingLeft)
        const right = box.right - parseFloat(style.borderRightWidth) - parseFloat(style.paddingRight)
        const canvas = card.querySelector('canvas')!.getBoundingClientRect()
        const legend = card.querySelector('.u-legend')!.getBoundingClientRect()
        return {
          id: card.id,
          inside: canvas.left >= left - 1 && canvas.right <= right + 1 && legend.right <= right + 1,
          // Sized to the card, not a fixed width that merely happens to fit.
          filled: canvas.width >= right - left - 2,
          width: Math.round(canvas.width),
          card: Math.round(right - left),
        }
      }),
    )
  }
  const noSideScroll = (target: Page) => target.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)

  for (const [name, path, first] of [
    ['Overview', '', '#chart-push canvas'],
    ['Usage', '/usage', '#chart-days-size canvas'],
  ] as const) {
    t.test(`the ${name} charts fit their cards at 1280x800 and 390x844, drawn at either width and resized`, async (t) => {
      for (const [width, height] of [
        [1280, 800],
        [390, 844],
      ] as const) {
        await page.setViewportSize({ width, height })
        await page.goto(`${dashboard}/projects/${ref}${path}`)
        await page.waitForSelector(first)
        const fits = await chartFits(page)
        t.ok(fits.length >= 3, `${fits.length} charts at ${width}`)
        for (const fit of fits) t.match(fit, { inside: true, filled: true }, `${fit.id} at ${width} px: canvas ${fit.width} in ${fit.card}`)
        t.ok(await noSideScroll(page), `no sideways scroll at ${width}`)
      }
      // Drawn at 390, then the window widens: each chart follows its card.
      await page.setViewportSize({ width: 1280, height: 800 })
      await page.waitForFunction(() =>
        [...document.querySelectorAll<HTMLElement>('figure.chart')].every((card) => {
          const style = getComputedStyle(card)
          const inner = card.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)
          return Math.abs(card.querySelector('canvas')!.getBoundingClientRect().width - inner) <= 2
        }),
      )
      for (const fit of await chartFits(page)) t.match(fit, { inside: true, filled: true }, `${fit.id} resized to 1280: canvas ${fit.width} in ${fit.card}`)
    })
  }

  t.test("the Usage tab shows the project's own quota overrides", async (t) => {
    await catalogue.query(`update baseplane.projects set quota_overrides = '{"policy": "bill", "figures": {"mail_sent": 10, "monthly_active_users": null}}' where ref = $1`, [ref])
    await page.goto(`${dashboard}/projects/${ref}/usage`)
    t.match(await text('#quota-policy'), /Plan free with this project's own overrides: .*billed.*\(bill\)/)
    t.same(
      { value: await page.getAttribute('#quota-mail_sent .figure', 'data-value'), text: await text('#quota-mail_sent .figure') },
      { value: '10', text: '10' },
    )
    t.equal(await text('#quota-monthly_active_users .figure'), 'none', 'no quota')
    t.equal(await text('#quota-monthly_active_users .used'), '2', 'still counted')
  })

  t.test('no request left 127.0.0.1', async (t) => {
    t.same(offsite, [])
  })
}
