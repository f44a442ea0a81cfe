// The operator's pages added by issue 28 item 6, in headless Chromium against
// a running platform: the Database tab (the owner's connection string, its
// password only when asked; the API roles' statement timeouts; project
// roles), the Keys tab (signing keys, the JWKS, rotation after a
// confirmation) and the PostgreSQL servers page (a second real server added,
// its budget, draining, removal). Each page shows the values the admin API
// answers; each form's change is read back through the admin API; bad input
// is refused with the error beside its field, every field's error at once
// (item 10), and nothing is written.
import t from 'tap'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { publishedKeys } from '../../lib/jwt.ts'
import { startTemporary } from '../../lib/db/embedded.ts'
import { getProject } from '../../control-plane/projects.ts'
import { formatTimeout } from '../../control-plane/role-timeouts.ts'
import { request } from '../helpers/http.ts'
import { dashboardSession, haveChromium } from './dashboard-browser.ts'

interface Timeouts {
  anon: number
  authenticated: number
  service_role: number
  idle_in_transaction: number
  custom: string[]
}
interface SigningKeys {
  keys: Array<{ kid: string; alg: string; state: string }>
}
interface Server {
  id: string
  url: string
  state: string
  connection_budget: number
  projects: number
  draining: boolean
}

if (haveChromium(t)) {
  const { platform, page, dashboard, offsite, text, signIn } = await dashboardSession(t, 'dashboard-operator')
  const project = await platform.createProject({ name: 'Ledger', auth: true })
  const adminApi = `${platform.origin}/platform/v1`
  const api = async <T>(path: string) => {
    const reply = await request<T>(`${adminApi}${path}`, { headers: { authorization: `Bearer ${platform.config.adminToken}` } })
    if (reply.status !== 200) throw new Error(`${path} answered ${reply.status}`)
    return reply.json
  }
  const dialogs: string[] = []
  // The session accepts every dialog; this only records what was asked.
  page.on('dialog', (dialog) => dialogs.push(dialog.message()))
  const submit = async (selector: string) => {
    await Promise.all([page.waitForNavigation(), page.click(selector)])
  }
  await signIn()

  t.test('the Database tab shows the connection string without its password until asked', async (t) => {
    await page.goto(`${dashboard}/projects/${project.ref}/database`)
    t.equal(await page.title(), 'Database · Ledger · Baseplane')
    const full = ownerUrlOf(project.record)
    const masked = new URL(full)
    masked.password = 'PASSWORD'
    t.equal(await text('#db-url'), masked.toString(), 'the owner role, host, port and database, the password replaced')
    t.notOk((await page.content()).includes(project.record.dbOwnerPassword), 'the password is nowhere in the page')
    t.equal(await text('#db-server'), project.record.dbServer)
    await submit('#db-url-reveal')
    t.equal(await text('#db-url'), full, 'asked for: the whole string, the password included')
    await page.goto(`${dashboard}/projects/${project.ref}/database`)
    t.notOk((await page.content()).includes(project.record.dbOwnerPassword), 'not shown again on the next visit')
  })

  t.test('statement timeouts: shown as stored, changed, refused beside each field', async (t) => {
    const before = await api<Timeouts>(`/projects/${project.ref}/timeouts`)
    const shown = (ms: number) => (ms === 0 ? '0' : formatTimeout(ms))
    await page.goto(`${dashboard}/projects/${project.ref}/database`)
    for (const field of ['anon', 'authenticated', 'service_role', 'idle_in_transaction'] as const) {
      t.equal(await page.inputValue(`#timeout-${field}`), shown(before[field]), `${field} as the admin API answers it`)
      t.equal(await text(`#timeout-${field}-source`), '(plan default)')
    }

    // Two bad values: both refused, each beside its own input, the typed text kept, nothing saved.
    await page.fill('#timeout-anon', '5')
    await page.fill('#timeout-service_role', 'soon')
    await submit('button:has-text("Save timeouts")')
    t.match(await text('#timeouts-anon-error'), 'needs a unit, such as 5s or 5ms, got "5"')
    t.match(await text('#timeouts-service_role-error'), 'must be a duration such as 500ms, 3s, 2m or 1h')
    t.equal(await page.getAttribute('#timeout-anon', 'aria-invalid'), 'true')
    t.equal(await page.getAttribute('#timeout-service_role', 'aria-describedby'), 'timeouts-service_role-error')
    t.equal(await page.inputValue('#timeout-service_role'), 'soon')
    t.same(await api<Timeouts>(`/projects/${project.ref}/timeouts`), before, 'nothing saved')

    await page.fill('#timeout-anon', '5s')
    await page.fill('#timeout-service_role', shown(before.service_role))
    await submit('button:has-text("Save timeouts")')
    t.equal(await text('[role=status]'), 'Timeouts saved: anon 5s. It applies from the next request.')
    const after = await api<Timeouts>(`/projects/${project.ref}/timeouts`)
    t.equal(after.anon, 5000)
    t.same(after.custom, ['anon'], 'only the changed timeout is stored; the others follow the plan')
    t.equal(await page.inputValue('#timeout-anon'), '5s')
    t.equal(await text('#timeout-anon-source'), '(set here)')

    await page.fill('#timeout-anon', '')
    await submit('button:has-text("Save timeouts")')
    t.equal(await text('[role=status]'), "Timeouts saved: anon back to the plan's default. It applies from the next request.")
    t.same(await api<Timeouts>(`/projects/${project.ref}/timeouts`), before)
  })

  t.test('project roles: added, refused beside the name, removed after a confirmation', async (t) => {
    await page.goto(`${dashboard}/projects/${project.ref}/database`)
    t.match(await text('#project-roles'), 'No roles of its own yet.')
    await page.fill('#role-name', 'Editor!')
    await submit('button:has-text("Add role")')
    t.match(await text('#role_add-name-error'), 'Invalid role name "Editor!"')
    t.equal(await page.inputValue('#role-name'), 'Editor!')
    t.same((await api<{ roles: string[] }>(`/projects/${project.ref}/roles`)).roles, [])

    await page.fill('#role-name', 'editor')
    await submit('button:has-text("Add role")')
    t.equal(await text('[role=status]'), 'Role editor added: the project\'s tokens may name it. It applies from the next request.')
    t.match(await text('#project-roles'), 'editor')
    t.same((await api<{ roles: string[] }>(`/projects/${project.ref}/roles`)).roles, ['editor'])

    dialogs.length = 0
    await submit('button[aria-label="Remove role editor"]')
    t.match(dialogs[0], /^Remove role editor\?/, 'asked first')
    t.equal(await text('[role=status]'), 'Role editor removed: tokens naming it are refused. It applies from the next request.')
    t.same((await api<{ roles: string[] }>(`/projects/${project.ref}/roles`)).roles, [])
  })

  t.test('the Keys tab: signing keys and the JWKS as published, a rotation after a confirmation', async (t) => {
    const before = await api<SigningKeys>(`/projects/${project.ref}/signing-keys`)
    await page.goto(`${dashboard}/projects/${project.ref}/keys`)
    t.equal(await page.title(), 'Keys · Ledger · Baseplane')
    t.equal(before.keys.length, 1)
    const first = before.keys[0]!
    t.match(await text(`tr[data-kid="${first.kid}"]`), new RegExp(`${first.kid}\\s+${first.alg}\\s+signs new tokens`))
    t.equal(await text('#signing-alg'), first.alg)
    const record = await getProject(platform.platform.controlPlane, project.ref)
    t.same(JSON.parse(await text('#jwks')), { keys: publishedKeys(record.signingKeys) }, 'the public keys, as the JWKS endpoint publishes them')
    t.notMatch(await text('#jwks'), /"d"\s*:/, 'no private member')
    t.equal(await text('#jwks-url'), `${project.baseUrl}/auth/v1/.well-known/jwks.json`)
    const published = await request<{ keys: Array<{ kid: string }> }>(`${project.baseUrl}/auth/v1/.well-known/jwks.json`, { headers: { apikey: project.anonKey } })
    t.same(published.json.keys.map((k) => k.kid), [first.kid], 'the URL shown answers the same keys')

    dialogs.length = 0
    await page.selectOption('#rotate-alg', 'RS256')
    await submit('#rotate-signing-key')
    t.match(dialogs[0], /^Rotate the signing key of /, 'asked first')
    const after = await api<SigningKeys>(`/projects/${project.ref}/signing-keys`)
    t.equal(after.keys.length, 2)
    const added = after.keys.find((key) => key.kid !== first.kid)!
    t.same([added.alg, added.state], ['RS256', 'standby'], 'a new RS256 key, published and waiting to sign')
    t.equal(await text('[role=status]'), `New RS256 signing key ${added.kid}: published now, it signs from 10 minutes on.`)
    t.match(await text(`tr[data-kid="${added.kid}"]`), 'published, waiting to sign')
    t.match(await text('#jwks'), added.kid)

    // A second rotation while one waits is refused (beside the form), unless at once.
    await submit('#rotate-signing-key')
    t.match(await text('#rotate--error'), `Signing key ${added.kid} already waits to sign`)
    t.equal((await api<SigningKeys>(`/projects/${project.ref}/signing-keys`)).keys.length, 2, 'nothing written')
    await page.check('#rotate-now')
    await submit('#rotate-signing-key')
    t.equal(await text('[role=status]'), `RS256 signing key ${added.kid} signs from now. It applies from the next request.`)
    const promoted = await api<SigningKeys>(`/projects/${project.ref}/signing-keys`)
    t.equal(promoted.keys.find((key) => key.kid === added.kid)!.state, 'in_use')
  })

  t.test('the servers page: what each says, a second server added, its budget, draining, removal', async (t) => {
    const second = await startTemporary()
    t.teardown(() => second.stop())
    await page.goto(dashboard)
    await submit('#servers-link')
    t.equal(await page.title(), 'Servers · Baseplane')
    const [listed] = await api<Server[]>('/servers')
    t.equal(listed!.id, 'default')
    t.match(await text('#server-default'), new RegExp(`default\\s+${listed!.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s+up`))
    t.equal(await text('#server-default .server-budget'), String(listed!.connection_budget))
    t.equal(await text('#server-default .server-projects'), String(listed!.projects))
    t.notOk((await page.content()).includes(new URL(platform.catalogueUrl).password || '\u0000'), 'no password in the page')

    // Two bad inputs: both refused beside their fields; the URL typed is never drawn back.
    await page.fill('#server-url', 'mysql://root:hunter2@db')
    await page.fill('#server-connections', 'lots')
    await submit('button:has-text("Add server")')
    t.match(await text('#add-url-error'), 'must look like postgres://')
    t.match(await text('#add-connections-error'), 'The connection budget must be a whole number, got "lots"')
    t.equal(await page.inputValue('#server-url'), '', 'the URL (with its password) is not drawn back')
    t.notOk((await page.content()).includes('hunter2'))
    t.equal((await api<Server[]>('/servers')).length, 1, 'nothing added')

    await page.fill('#server-url', second.url)
    await page.fill('#server-id', 'db-two')
    await page.fill('#server-connections', '')
    await submit('button:has-text("Add server")')
    t.equal(await text('[role=status]'), 'Database server db-two added: new projects may be placed there.')
    let two = (await api<Server[]>('/servers')).find((s) => s.id === 'db-two')!
    t.ok(two, 'listed by the admin API')
    t.equal(await text('#server-db-two .server-budget'), String(two.connection_budget))
    t.match(await text('#server-db-two .server-state'), 'up')

    await page.fill('#connections-db-two', '0')
    await submit('button[aria-label="Save the budget of db-two"]')
    t.match(await text('#budget-db-two-connections-error'), 'The connection budget must be a whole number from 1 to 100000, got 0')
    t.equal((await api<Server[]>('/servers')).find((s) => s.id === 'db-two')!.connection_budget, two.connection_budget, 'budget unchanged')
    await page.fill('#connections-db-two', '7')
    await submit('button[aria-label="Save the budget of db-two"]')
    t.equal(await text('[role=status]'), 'Database server db-two now has a budget of 7 connections.')
    t.equal((await api<Server[]>('/servers')).find((s) => s.id === 'db-two')!.connection_budget, 7)

    await submit('button[aria-label="Drain db-two"]')
    t.equal(await text('[role=status]'), 'Database server db-two is draining: it keeps its projects and takes no new one.')
    two = (await api<Server[]>('/servers')).find((s) => s.id === 'db-two')!
    t.equal(two.draining, true)
    t.match(await text('#server-db-two .server-draining'), 'draining')

    dialogs.length = 0
    await submit('button[aria-label="Remove db-two"]')
    t.match(dialogs[0], /^Remove database server db-two/, 'asked first')
    t.equal(await text('[role=status]'), 'Database server db-two removed from the platform; its databases were not touched.')
    t.same((await api<Server[]>('/servers')).map((s) => s.id), ['default'])
  })

  t.test('every field error shows at once (Auth settings, suspension)', async (t) => {
    await page.goto(`${dashboard}/projects/${project.ref}/auth`)
    await page.fill('#setting-mail_per_hour', '-5')
    await page.fill('#setting-password_min_length', '2')
    await submit('button:has-text("Save settings")')
    t.match(await text('#settings-mail_per_hour-error'), 'a whole number from 0 to 1000000, got "-5"')
    t.match(await text('#settings-password_min_length-error'), 'a whole number from 6 to 72, got "2"')

    await page.goto(`${dashboard}/projects/${project.ref}/settings`)
    await page.fill('#suspend-confirm', 'wrong')
    await submit('button:has-text("Suspend project")')
    t.match(await text('#suspend-reason-error'), /^reason is required/)
    t.equal(await text('#suspend-confirm-error'), `Type ${project.ref} to confirm`)
  })

  t.test('the new pages fit a phone: nothing scrolls the page sideways', async (t) => {
    await page.setViewportSize({ width: 390, height: 844 })
    for (const path of [`/projects/${project.ref}/database`, `/projects/${project.ref}/keys`, '/servers']) {
      await page.goto(`${dashboard}${path}`)
      const [scroll, client] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth])
      t.ok(scroll <= client, `${path}: ${scroll} <= ${client}`)
    }
    await page.setViewportSize({ width: 1280, height: 800 })
  })

  t.test('no request left 127.0.0.1', async (t) => {
    t.same(offsite, [])
  })
}
