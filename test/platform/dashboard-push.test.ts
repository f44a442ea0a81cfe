// The dashboard's Push tab in headless Chromium, against a running platform
// whose push actors send to local APNs and FCM stand-ins: the Apple and
// Android cards take the key files and check them before storing, a stored
// key shows only what identifies it and can be removed, a stopped provider
// says what to do, devices get test notifications, the delivery log filters
// and pages, a page of it (and of the devices) a few lines an entry on a
// phone; every refusal; the same operations over the admin API.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { signJwt } from '../../lib/jwt.ts'
import { adminQuery } from '../helpers/db.ts'
import { request, type ErrorBody } from '../helpers/http.ts'
import { adminUrlFor } from '../../lib/db/server-url.ts'
import { eventually } from '../push/helpers.ts'
import { makeApnsKey, makeServiceAccount } from '../../dev/push-peers/keys.ts'
import { startApnsPeer } from '../../dev/push-peers/apns-peer.ts'
import { startFcmPeer } from '../../dev/push-peers/fcm-peer.ts'
import { dashboardSession, haveChromium } from './dashboard-browser.ts'

const TOPIC = 'com.example.shop'

if (haveChromium(t)) {
  // One browser drives some sixty page loads and form posts; on a shared, loaded machine that outlasts tap's 120 s.
  t.setTimeout(300_000)
  const key = makeApnsKey()
  const apns = await startApnsPeer({ teamId: key.teamId, keyId: key.keyId, publicKey: key.publicKey, topic: TOPIC })
  t.teardown(() => apns.close())
  const fcm = await startFcmPeer()
  t.teardown(() => fcm.close())
  const { platform, page, dashboard, offsite, text, signIn } = await dashboardSession(t, 'dashboard-push', {
    BASEPLANE_APNS_URL: apns.url,
    BASEPLANE_FCM_URL: fcm.url,
    BASEPLANE_FCM_TOKEN_URL: fcm.tokenUrl,
  })
  const project = await platform.createProject({ name: 'Push Shop', push: true })
  const ref = project.ref
  const pushPage = `${dashboard}/projects/${ref}/push`

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-dashboard-push-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const file = (name: string, content: string) => {
    fs.writeFileSync(path.join(dir, name), content)
    return path.join(dir, name)
  }
  const p8 = file('AuthKey.p8', key.p8)
  const notAKey = file('notes.p8', 'these are not the keys you are looking for')
  const account = makeServiceAccount()
  fcm.allow(account.file.client_email, account.file.project_id, account.publicKey)
  const accountFile = file('service-account.json', JSON.stringify(account.file))
  const unknownAccount = file('unknown.json', JSON.stringify(makeServiceAccount('other-project-42').file))

  const admin = async <T = unknown>(method: string, route: string, body?: object) =>
    request<T>(`${platform.origin}/platform/v1/projects/${ref}/push${route}`, { method, headers: { authorization: `Bearer ${platform.config.adminToken}` }, body })
  const stored = async () => (await admin<{ apns: unknown; fcm: unknown }>('GET', '/credentials')).json

  /** Chooses a file and waits for the page's script to put its text in the box the form sends. */
  const chooseFile = async (input: string, box: string, name: string) => {
    await page.fill(box, '')
    await page.setInputFiles(input, name)
    await page.waitForFunction((selector) => (document.querySelector(selector) as HTMLTextAreaElement).value !== '', box)
  }
  const fillApple = async (fields: { topic?: string; keyId?: string; teamId?: string; file?: string }) => {
    await page.fill('#apns-topic', fields.topic ?? TOPIC)
    await page.fill('#apns-key_id', fields.keyId ?? key.keyId)
    await page.fill('#apns-team_id', fields.teamId ?? key.teamId)
    if (fields.file) await chooseFile('#apns-file', '#apns-p8', fields.file)
  }

  t.test('the Push tab: three cards, key forms, empty devices and log that say what to do', async (t) => {
    await signIn()
    const answer = await page.goto(pushPage)
    t.equal(answer?.status(), 200)
    t.equal(await page.title(), 'Push · Push Shop · Baseplane')
    t.match(await text('#push-web'), 'Ready')
    t.match(await text('#vapid-public-key'), /^[A-Za-z0-9_-]{80,}$/)
    t.match(await text('#apns-state'), 'No key')
    t.match(await text('#fcm-state'), 'No service account')
    for (const label of ['Bundle id', 'Key id', 'Team id', 'Signing key file (.p8)']) t.equal(await page.getByLabel(label, { exact: true }).count(), 1, `the Apple card asks for ${label}`)
    t.equal(await page.getByLabel('Service-account file (.json)').count(), 1, 'the Android card asks for the service-account file')
    t.match(await text('#devices .empty'), 'No devices yet. Apps register theirs with POST {base_url}/push/v1/devices')
    t.match(await text('#log .empty'), 'No deliveries yet. Send a test notification')
  })

  t.test('a refused Apple key keeps the typed ids, says why beside the field, and stores nothing', async (t) => {
    await page.goto(pushPage)
    await fillApple({ keyId: 'SHORT', file: p8 })
    await page.click('#apns-store')
    t.match(await text('#apns-key_id-error'), 'key_id must be the 10-character key id from the developer account')
    t.equal(await page.getAttribute('#apns-key_id', 'aria-invalid'), 'true')
    t.equal(await page.inputValue('#apns-topic'), TOPIC, 'the typed bundle id is kept')
    t.equal(await page.inputValue('#apns-key_id'), 'SHORT')
    t.equal(await page.inputValue('#apns-p8'), '', 'the key is not drawn back into the page')
    t.notMatch(await page.content(), 'PRIVATE KEY')

    await fillApple({ file: notAKey })
    t.equal(await page.inputValue('#apns-p8'), 'these are not the keys you are looking for', 'the chosen file fills the box the form sends')
    await page.click('#apns-store')
    t.match(await text('#apns-p8-error'), 'The APNs key is not usable: it is not a PEM private key')

    await fillApple({})
    await page.click('#apns-store')
    t.match(await text('#apns-p8-error'), 'keys[0].p8 is required')
    t.equal((await stored()).apns, null, 'nothing stored')
  })

  t.test('an Apple key chosen as a file is checked, stored, and shown only by what identifies it', async (t) => {
    await page.goto(pushPage)
    await fillApple({ file: p8 })
    await page.click('#apns-store')
    t.equal(await text('[role=status]'), `Apple key ${key.keyId} for ${TOPIC} checked and stored. Sending to Apple devices uses it from the next delivery (deliveries held by a stop go out now).`)
    t.equal(await text('#apns-state'), 'Key stored')
    t.equal(await text('#apns-topic-shown'), TOPIC)
    t.match(await text('#push-apns'), `${key.keyId}`)
    t.match(await text('#push-apns'), `${key.teamId}`)
    t.match(await text('#push-apns'), /Stored\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/)
    t.equal(await text('#apns-sending'), 'Sending')
    t.notMatch(await page.content(), 'PRIVATE KEY', 'the key never comes back')
  })

  t.test('an Android service account must obtain a token before it is stored', async (t) => {
    await page.goto(pushPage)
    await page.click('#fcm-store')
    t.equal(await text('#fcm-service_account-error'), 'Choose the service-account file (or paste its JSON)')
    await chooseFile('#fcm-file', '#fcm-service-account', unknownAccount)
    await page.click('#fcm-store')
    t.match(await text('#fcm-service_account-error'), /^The service account did not obtain an access token: .*invalid_grant/)
    t.equal(await page.inputValue('#fcm-service-account'), '', 'the refused file is not drawn back')
    await page.fill('#fcm-service-account', '{"type": "service_account"')
    await page.click('#fcm-store')
    t.equal(await text('#fcm-service_account-error'), 'The service account is not usable: the file is not JSON')
    t.equal((await stored()).fcm, null)

    await chooseFile('#fcm-file', '#fcm-service-account', accountFile)
    await page.click('#fcm-store')
    t.match(await text('[role=status]'), `Service account of Firebase project ${account.file.project_id} checked (it obtained a token) and stored.`)
    t.equal(await text('#fcm-state'), 'Service account stored')
    t.equal(await text('#fcm-project-shown'), account.file.project_id)
    t.match(await text('#push-fcm'), account.file.client_email)
    t.notMatch(await page.content(), 'PRIVATE KEY')
  })

  const alice = crypto.randomUUID()
  const bob = crypto.randomUUID()
  const device = async (sub: string, body: object) => {
    const token = await signJwt(project.record.jwtSecret, { sub, role: 'authenticated', aud: 'authenticated', exp: Math.floor(Date.now() / 1000) + 600 })
    const answer = await request<{ id: string }>(`${project.baseUrl}/push/v1/devices`, { headers: { apikey: project.anonKey, authorization: `Bearer ${token}` }, body })
    if (answer.status !== 201) throw new Error(answer.text)
    return answer.json.id
  }
  const sendTest = async (id: string) => {
    await page.click(`button[aria-label="Send a test notification to device ${id}"]`)
    t.equal(await text('[role=status]'), `Test notification queued for device ${id}. Its outcome appears in the delivery log below once the provider answers.`)
  }
  let iphone = ''
  let gone = ''

  t.test('devices, a test notification to one device, the delivery log with filters and pages', async (t) => {
    iphone = await device(alice, { platform: 'apns', token: 'ab'.repeat(32) })
    gone = await device(alice, { platform: 'apns', token: `dead${'0'.repeat(60)}` })
    const pixel = await device(bob, { platform: 'fcm', token: 'pixel-token-1' })
    await page.goto(pushPage)
    t.equal(await page.locator('#devices tbody tr').count(), 3)
    t.match(await text(`#device-${iphone}`), new RegExp(`Apple \\(APNs\\)\\s+${alice}\\s+active`))
    t.match(await text(`#device-${iphone}`), 'abababababababab…', 'only the start of the token')

    await sendTest(iphone)
    await eventually(() => apns.delivered.length === 1, 10000, 'the APNs stand-in got it')
    t.match(apns.delivered[0], { token: 'ab'.repeat(32), payload: { aps: { alert: { title: 'Test notification' } }, baseplane_test: true } })
    await sendTest(pixel)
    await eventually(() => fcm.delivered.length === 1, 10000, 'the FCM stand-in got it')
    await sendTest(gone)
    await eventually(async () => (await admin<{ entries: unknown[] }>('GET', '/log')).json.entries.length === 3, 10000, 'three attempts logged')

    await page.goto(pushPage)
    t.match(await text(`#device-${gone}`), 'deactivated: APNs: Unregistered')
    t.equal(await page.locator(`button[aria-label="Send a test notification to device ${gone}"]`).count(), 0, 'no test button for a deactivated device')
    t.equal(await page.locator('#log tbody tr').count(), 3)
    t.match(await text('#log tbody tr'), /failed\s+Apple \(APNs\)\s+1\s+Test notification [0-9a-f]{8}\s+APNs: Unregistered \(HTTP 410\)/, 'newest first, with its message and the provider\'s reason')

    /** Clicks a section's filter button; answers its rows' count and the first row's text. */
    const filter = async (section: 'log' | 'devices'): Promise<[number, string]> => {
      await page.click(section === 'log' ? '#log-filter' : '#device-filter')
      const rows = page.locator(`#${section} tbody tr`)
      const count = await rows.count()
      return [count, count > 0 ? await rows.first().innerText() : '']
    }
    await page.selectOption('#log-status', 'failed')
    t.match(await filter('log'), [1, gone])
    await page.selectOption('#log-status', '')
    await page.selectOption('#log-provider', 'fcm')
    t.match(await filter('log'), [1, /sent\s+Android \(FCM\)/])
    await page.selectOption('#log-provider', '')
    await page.fill('#log-user', alice)
    t.equal((await filter('log'))[0], 2)
    await page.fill('#log-user', '')
    await filter('log')

    await page.selectOption('#device-platform', 'fcm')
    t.match(await filter('devices'), [1, bob])
    await page.selectOption('#device-platform', '')
    await page.selectOption('#device-active', 'false')
    await page.fill('#device-user', alice)
    t.match(await filter('devices'), [1, gone])

    // Filters typed into the URL are refused beside the filter, not as an error page.
    const bad = await page.goto(`${pushPage}?status=lost&device_user=bob`)
    t.equal(bad?.status(), 200)
    t.equal(await text('#log-filter-error'), 'status must be one of sent, failed, retry, held, expired, got "lost"')
    t.equal(await page.getAttribute('#log-status', 'aria-invalid'), 'true')
    t.equal(await text('#devices-filter-error'), 'user must be a user id (a UUID), got "bob"')
    t.equal(await page.getAttribute('#device-user', 'aria-invalid'), 'true')
    await page.goto(`${pushPage}?active=maybe&before=x`)
    t.equal(await text('#devices-filter-error'), 'active must be true or false')
    t.match(await text('#log-filter-error'), /^before must be a whole number/)
  })

  t.test('pages of the delivery log and of the devices', async (t) => {
    await adminQuery(
      adminUrlFor(platform.platform.controlPlane.defaultServerUrl, project.record.dbName),
      `insert into push.devices (user_id, platform, token, p256dh, auth)
       select $1, 'web', 'https://push.example.net/sub/' || i, 'p256dh-' || i, 'auth' from generate_series(1, 26) as i`,
      [bob],
    )
    await page.goto(pushPage)
    t.equal(await page.locator('#devices tbody tr').count(), 25)
    await page.click('#devices-next')
    t.equal(await page.locator('#devices tbody tr').count(), 4)
    await page.click('#devices-previous')
    t.equal(await page.locator('#devices tbody tr').count(), 25)
    const log = (await admin<{ entries: Array<{ id: number }> }>('GET', '/log?limit=1')).json
    await page.goto(`${pushPage}?before=${log.entries[0]!.id}`)
    t.equal(await page.locator('#log tbody tr').count(), 2, 'older entries only')
    await page.click('#log-newest')
    t.equal(await page.locator('#log tbody tr').count(), 3)
  })

  t.test('a test notification to a device removed meanwhile is refused beside the list', async (t) => {
    const doomed = await device(alice, { platform: 'apns', token: 'cd'.repeat(32) })
    await page.goto(pushPage)
    const token = await signJwt(project.record.jwtSecret, { sub: alice, role: 'authenticated', aud: 'authenticated', exp: Math.floor(Date.now() / 1000) + 600 })
    const removed = await request(`${project.baseUrl}/push/v1/devices/${doomed}`, { method: 'DELETE', headers: { apikey: project.anonKey, authorization: `Bearer ${token}` } })
    t.equal(removed.status, 204)
    await page.click(`button[aria-label="Send a test notification to device ${doomed}"]`)
    t.equal(await text('#test--error'), `Project ${ref} has no device ${doomed}`)
  })

  t.test('a stopped provider says why and what to do; storing the key again resumes', async (t) => {
    apns.script.set('ab'.repeat(32), [{ status: 403, reason: 'InvalidProviderToken' }])
    await page.goto(`${pushPage}?device_user=${alice}`)
    await sendTest(iphone)
    await eventually(async () => (await admin<{ apns: { stopped_reason: string | null } }>('GET', '/credentials')).json.apns.stopped_reason, 10000, 'stopped')
    await page.goto(pushPage)
    t.match(await text('#apns-stopped'), /Sending stopped since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: APNs: InvalidProviderToken/)
    t.match(await text('#apns-what-to-do'), /^Apple refused the signing key: check that the key id and team id belong to this \.p8 file.*Storing keys again \(the same or new\) resumes sending/)
    t.match(await text('#fcm-sending'), 'Sending', 'the other provider goes on')

    await page.click('#push-apns summary')
    await fillApple({ file: p8 })
    await page.click('#apns-store')
    t.match(await text('[role=status]'), 'checked and stored')
    t.equal(await text('#apns-sending'), 'Sending')
    t.equal(await page.locator('#apns-stopped').count(), 0)
  })

  t.test('removing a stored key; removing one already gone is refused beside the button', async (t) => {
    await page.goto(pushPage)
    await page.click('#apns-remove')
    t.equal(await text('[role=status]'), 'The Apple (APNs) key was removed. Nothing is sent through Apple (APNs) until a new one is stored.')
    t.match(await text('#apns-state'), 'No key')
    t.equal((await stored()).apns, null)

    await page.goto(pushPage)
    t.equal((await admin('DELETE', '/credentials/fcm')).status, 204, 'removed meanwhile, over the admin API')
    await page.click('#fcm-remove')
    t.equal(await text('#remove-fcm--error'), 'No fcm credentials are set')
    t.match(await text('#fcm-state'), 'No service account')
  })

  t.test('the same operations over the admin API', async (t) => {
    const log = await admin<{ entries: Array<{ status: string; reason: string | null }>; next_before: number | null }>('GET', `/log?status=held&provider=apns&user=${alice}&limit=10`)
    t.equal(log.status, 200)
    t.match(log.json.entries, [{ status: 'held', reason: 'APNs: InvalidProviderToken', http_status: 403 }], 'held while APNs was stopped')
    t.equal(log.json.entries.length, 1)
    const devices = await admin<{ devices: unknown[]; next_offset: number | null }>('GET', '/devices?platform=web&limit=20')
    t.equal(devices.json.devices.length, 20)
    t.equal(devices.json.next_offset, 20)
    const test = await admin<{ id: string; device_id: string }>('POST', `/devices/${iphone}/test`, { title: 'From the API' })
    t.equal(test.status, 201)
    t.equal(test.json.device_id, iphone)
    for (const [method, route, status, code] of [
      ['GET', '/log?status=lost', 400, 'invalid_argument'],
      ['GET', '/log?limit=abc', 400, 'invalid_argument'],
      ['GET', '/devices?active=maybe', 400, 'invalid_argument'],
      ['POST', `/devices/${gone}/test`, 409, 'device_inactive'],
      ['POST', `/devices/${crypto.randomUUID()}/test`, 404, 'device_not_found'],
      ['DELETE', '/credentials/apns', 404, 'credentials_not_found'],
      ['PUT', '/credentials/apns', 400, 'invalid_apns_key'],
    ] as const) {
      const answer = await admin<ErrorBody>(method, route, method === 'PUT' ? { topic: TOPIC, key_id: key.keyId, team_id: key.teamId, keys: [{ p8: 'nope' }] } : undefined)
      t.equal(answer.status, status, `${method} ${route}`)
      t.equal(answer.json.code, code)
    }
    const put = await admin<{ platform: string }>('PUT', '/credentials/fcm', account.file)
    t.equal(put.status, 200, put.text)
    const signedOut = await request(`${platform.origin}/platform/v1/projects/${ref}/push/credentials`)
    t.equal(signedOut.status, 401)
  })

  t.test('phone width: the Push tab does not overflow', async (t) => {
    await page.setViewportSize({ width: 375, height: 740 })
    await page.goto(pushPage)
    const width = await page.evaluate(() => document.documentElement.scrollWidth)
    t.ok(width <= 375, `the Push tab is ${width}px wide at 375px`)
    await page.setViewportSize({ width: 1280, height: 800 })
  })

  t.test('phone width: a full page of the delivery log stays readable, each entry a few lines (issue 37 item 8)', async (t) => {
    // A page's worth (25) of attempts with what real ones carry: a title, the provider's reason with its HTTP status, ids.
    await adminQuery(
      adminUrlFor(platform.platform.controlPlane.defaultServerUrl, project.record.dbName),
      // Replica mode: the messages are only what the log names, not sent (their fan-out trigger does not fire).
      `set session_replication_role = replica;
       insert into push.messages (device_id, title, body) select '${iphone}', 'Your order #' || i || ' has shipped and is on its way to you', 'body' from generate_series(1, 25) i;
       insert into push.delivery_log (queue_id, message_id, device_id, provider, attempt, status, http_status, reason)
       select 0, m.id, '${iphone}', 'fcm', 2, 'failed', 404, 'FCM: UNREGISTERED (the registration token is not valid anymore: the app was removed or its data cleared)'
         from push.messages m where m.title like 'Your order #%'`,
    )
    // Measured at 390x844 with 25 devices and 25 attempts: before, each row wrapped a word a line (260 px) and the page
    // was 15,300 to 15,900 px tall; stacked, a log row is 110 px, a device's 124 px and the page 8,640 px. The bounds leave room
    // for another machine's fonts.
    await page.setViewportSize({ width: 390, height: 844 })
    await page.goto(pushPage)
    t.equal(await page.locator('#log tbody tr').count(), 25, 'a full page of the log')
    t.equal(await page.locator('#devices tbody tr').count(), 25, 'and of the devices')
    const measure = () =>
      page.evaluate(() => ({
        page: document.documentElement.scrollHeight,
        width: document.documentElement.scrollWidth,
        log: Math.max(...[...document.querySelectorAll<HTMLElement>('#log tbody tr')].map((row) => row.getBoundingClientRect().height)),
        devices: Math.max(...[...document.querySelectorAll<HTMLElement>('#devices tbody tr')].map((row) => row.getBoundingClientRect().height)),
      }))
    const phone = await measure()
    t.ok(phone.log <= 130, `each log entry a few lines: the tallest is ${phone.log} px`)
    t.ok(phone.devices <= 150, `each device a few lines: the tallest is ${phone.devices} px`)
    t.ok(phone.page <= 10_000, `the Push tab is ${phone.page} px tall at 390x844`)
    t.ok(phone.width <= 390, `and ${phone.width} px wide`)
    // What is cut is in the cell's title, and the entry still says what happened.
    const first = page.locator('#log tbody tr').first()
    t.match(await first.innerText(), /failed\s+Android \(FCM\)\s+2\s+Your order #25/)
    t.match(await first.locator('td.rest').getAttribute('title'), /^Your order #25 has shipped and is on its way to you \(message [0-9a-f-]{36}\)$/)
    t.equal(await first.locator('td.lines').getAttribute('title'), 'FCM: UNREGISTERED (the registration token is not valid anymore: the app was removed or its data cleared) (HTTP 404)')
    t.equal(await first.locator('td[data-label=device]').getAttribute('title'), iphone)
    t.equal(await first.locator('td[data-label=attempt]').evaluate((cell) => getComputedStyle(cell, '::before').content), '"attempt "', 'a cell without its column named says what it is')
    t.equal(await page.locator('#log thead').isVisible(), true, 'the head is kept for screen readers (drawn 1 px)')

    // At a desktop's width the log is the table it was.
    await page.setViewportSize({ width: 1280, height: 800 })
    await page.goto(pushPage)
    t.equal(await page.locator('#log tbody tr').first().evaluate((row) => getComputedStyle(row).display), 'table-row')
    t.ok((await page.locator('#log thead th').first().boundingBox())!.height > 10, 'its head drawn')
  })

  t.test('no request left 127.0.0.1', async (t) => {
    t.same(offsite, [])
  })
}
