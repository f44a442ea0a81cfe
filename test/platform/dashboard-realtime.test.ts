// The Realtime tab in headless Chromium: the plan's limits and this node's
// figures; the inspector joining a channel as anon and listing a broadcast
// sent over HTTP, and a private channel refused with Realtime's reason (no
// policy lets anon read it), as an app's client would see both.
import t from 'tap'
import { request } from '../helpers/http.ts'
import { dashboardSession, haveChromium } from './dashboard-browser.ts'

if (haveChromium(t)) {
  const { platform, page, dashboard, offsite, text, signIn } = await dashboardSession(t, 'dashboard-realtime', { BASEPLANE_HTTP_ENGINE: 'uws' })
  const project = await platform.createProject({ name: 'Chat' })
  const tab = `${dashboard}/projects/${project.ref}/realtime`

  t.test('the limits of its plan and this node\'s figures', async (t) => {
    await signIn()
    await page.goto(tab)
    t.match(await text('#rt-limits'), 'Limits of the free plan')
    t.match(await text('main'), /Concurrent connections\s+200/)
    t.match(await text('main'), /Broadcast payload\s+256 KB/)
    t.equal(await text('#rt-connections'), '0', 'no socket open yet')
    await page.setViewportSize({ width: 390, height: 844 })
    await page.goto(tab)
    const width = await page.evaluate(() => document.documentElement.scrollWidth)
    t.ok(width <= 390, `the tab fits a phone: ${width} px wide at 390x844`)
    await page.setViewportSize({ width: 1280, height: 800 })
  })

  t.test('the inspector joins as anon and lists a broadcast as it arrives', async (t) => {
    await page.goto(tab)
    await page.fill('#rt-topic', 'lobby')
    // A first socket's 1006 (docs/realtime.md) is joined again, as the operator would.
    for (let attempt = 0; attempt < 3; attempt++) {
      await page.click('#rt-join')
      await page.waitForFunction(() => !document.getElementById('rt-status')!.textContent!.startsWith('Joining'))
      if (!(await text('#rt-status')).startsWith('Closed (1006')) break
    }
    t.equal(await text('#rt-status'), 'Joined realtime:lobby as anon')
    const sent = await request(`${project.baseUrl}/realtime/v1/api/broadcast/lobby/events/said`, { headers: { apikey: project.anonKey }, body: { text: 'hello from HTTP' } })
    t.equal(sent.status, 202)
    await page.waitForSelector('#rt-log li[data-event="broadcast"]')
    t.match(await text('#rt-log li[data-event="broadcast"]'), '"event":"said"')
    t.match(await text('#rt-log li[data-event="broadcast"]'), '"text":"hello from HTTP"')
    await page.click('#rt-leave')
    t.equal(await text('#rt-status'), 'Left')
    // Joined again from the same page (a new socket, later refs): the answer is still recognised.
    await page.click('#rt-join')
    await page.waitForFunction(() => !document.getElementById('rt-status')!.textContent!.startsWith('Joining'))
    if ((await text('#rt-status')).startsWith('Closed (1006')) await page.click('#rt-join')
    await page.waitForFunction(() => document.getElementById('rt-status')!.textContent!.startsWith('Joined'))
    t.equal(await text('#rt-status'), 'Joined realtime:lobby as anon', 'joined again')
  })

  t.test('a private channel no policy lets anon read is refused with the reason', async (t) => {
    await page.goto(tab)
    await page.fill('#rt-topic', 'secret')
    await page.check('#rt-private')
    for (let attempt = 0; attempt < 3; attempt++) {
      await page.click('#rt-join')
      await page.waitForFunction(() => !document.getElementById('rt-status')!.textContent!.startsWith('Joining'))
      if (!(await text('#rt-status')).startsWith('Closed (1006')) break
    }
    t.equal(await text('#rt-status'), 'Refused: Unauthorized: You do not have permissions to read from this Channel topic: secret')
    t.same(offsite, [], 'nothing loaded from elsewhere')
  })
}
