// GET /admin/users as supabase-js's auth.admin.listUsers() calls it (issue 15
// item 1): no arguments sends `?page=&per_page=`, which is page 1 of 50;
// pages, X-Total-Count and Link as GoTrue writes them; bad values answered
// with GoTrue's "Bad Pagination Parameters".
import t from 'tap'
import { authFixture, call } from './helpers.ts'

t.test('admin listUsers', async (t) => {
  const f = await authFixture(t)
  const admin = f.admin()
  const service = { key: f.project.serviceRoleKey }

  await t.test('no users: an empty first page', async (t) => {
    const { data, error } = await admin.auth.admin.listUsers()
    t.error(error)
    t.same(data.users, [])
    const raw = await call(f, 'GET', '/admin/users?page=&per_page=', undefined, service)
    t.equal(raw.status, 200)
    t.equal(raw.headers.get('x-total-count'), '0')
    t.equal(raw.headers.get('link'), `<${f.url('/admin/users')}?page=0&per_page=>; rel="last"`, 'GoTrue: last page 0 when there is none')
  })

  const ids: string[] = []
  for (let i = 0; i < 55; i++) ids.push(`user${String(i).padStart(2, '0')}@example.test`)
  // A few at a time: the free plan queues at most 32 requests behind its 4 at once.
  for (let i = 0; i < ids.length; i += 4) {
    await Promise.all(ids.slice(i, i + 4).map(async (email) => {
      const r = await admin.auth.admin.createUser({ email, email_confirm: true })
      if (r.error) throw r.error
    }))
  }

  await t.test('no arguments: page 1 of 50, as auth-js sends it', async (t) => {
    const { data, error } = await admin.auth.admin.listUsers()
    t.error(error)
    if (error) throw error
    t.equal(data.users.length, 50)
    t.equal(data.total, 55)
    t.equal(data.nextPage, 2)
    t.equal(data.lastPage, 2)
    const raw = await call(f, 'GET', '/admin/users?page=&per_page=', undefined, service)
    t.equal(raw.status, 200)
    t.equal(raw.headers.get('x-total-count'), '55')
    const base = f.url('/admin/users')
    t.equal(raw.headers.get('link'), `<${base}?page=2&per_page=>; rel="next", <${base}?page=2&per_page=>; rel="last"`)
    t.equal((raw.body.users as unknown[]).length, 50)
    t.equal(raw.body.aud, 'authenticated')
  })

  await t.test('page and perPage', async (t) => {
    const seen = new Set<string>()
    for (let page = 1; page <= 6; page++) {
      const { data, error } = await admin.auth.admin.listUsers({ page, perPage: 10 })
      t.error(error)
      if (error) throw error
      t.equal(data.users.length, page < 6 ? 10 : 5, `page ${page}`)
      for (const u of data.users) seen.add(u.id)
      t.equal(data.total, 55)
      t.equal(data.lastPage, 6)
      t.equal(data.nextPage, page < 6 ? page + 1 : null)
    }
    t.equal(seen.size, 55, 'every user once across the pages')
    const beyond = await admin.auth.admin.listUsers({ page: 7, perPage: 10 })
    t.error(beyond.error)
    t.same(beyond.data.users, [])
    const zero = await call(f, 'GET', '/admin/users?page=0&per_page=5', undefined, service)
    t.equal(zero.status, 200, 'page 0 reads as page 1 (GoTrue)')
    t.equal((zero.body.users as unknown[]).length, 5)
    const filtered = await call(f, 'GET', '/admin/users?per_page=2&filter=user0&page=1', undefined, service)
    t.equal(filtered.headers.get('x-total-count'), '10')
    t.equal(filtered.headers.get('link'), `<${f.url('/admin/users')}?page=2&filter=user0&per_page=2>; rel="next", <${f.url('/admin/users')}?page=5&filter=user0&per_page=2>; rel="last"`, 'page first, the other parameters kept')
  })

  await t.test('bad values: 400 Bad Pagination Parameters', async (t) => {
    const cases: Array<[string, string]> = [
      ['page=abc', 'Bad Pagination Parameters: strconv.ParseUint: parsing "abc": invalid syntax'],
      ['page=-1', 'Bad Pagination Parameters: strconv.ParseUint: parsing "-1": invalid syntax'],
      ['per_page=1.5', 'Bad Pagination Parameters: strconv.ParseUint: parsing "1.5": invalid syntax'],
      ['per_page=0', 'Bad Pagination Parameters: per_page must be greater than 0'],
      ['per_page=1001', 'Bad Pagination Parameters: per_page must be at most 1000'],
      ['page=99999999999999999999', 'Bad Pagination Parameters: strconv.ParseUint: parsing "99999999999999999999": value out of range'],
    ]
    for (const [query, message] of cases) {
      const r = await call(f, 'GET', `/admin/users?${query}`, undefined, service)
      t.same([r.status, r.body.code, r.body.message], [400, 'validation_failed', message], query)
    }
    const viaClient = await admin.auth.admin.listUsers({ page: -1 })
    t.equal(viaClient.error?.status, 400)
    t.equal(viaClient.error?.code, 'validation_failed')
    t.same(viaClient.data.users, [])
    const anon = await f.anon().auth.admin.listUsers()
    t.same([anon.error?.status, anon.error?.code], [403, 'not_admin'])
  })
})
