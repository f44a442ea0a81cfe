import t from 'tap'
import { apiDatabaseOf, ownerUrlOf } from '../../lib/catalogue.ts'
import { connectClient, withDatabase } from '../helpers/db.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const platform = await startTestPlatform(t)
const a = await platform.createProject({ name: 'A' })
const b = await platform.createProject({ name: 'B' })

function urlAs(user: string, password: string, database: string): string {
  const url = new URL(ownerUrlOf(a.record))
  url.username = encodeURIComponent(user)
  url.password = encodeURIComponent(password)
  url.pathname = `/${database}`
  return url.toString()
}

t.test("A's roles cannot connect to B's database", async (t) => {
  const ownerIntoB = urlAs(a.record.dbOwnerRole, a.record.dbOwnerPassword, b.record.dbName)
  await t.rejects(connectClient(ownerIntoB), /permission denied for database/)
  const apiIntoB = urlAs(a.record.dbApiRole, a.record.dbApiPassword, b.record.dbName)
  await t.rejects(connectClient(apiIntoB), /permission denied for database/)
  const own = await connectClient(ownerUrlOf(a.record))
  t.equal((await own.query('select current_database() as db')).rows[0].db, a.record.dbName)
  await own.end()
})

t.test("A's owner cannot read the catalogue or become another role", async (t) => {
  const catalogueAsOwner = withDatabase(urlAs(a.record.dbOwnerRole, a.record.dbOwnerPassword, 'x'), new URL(platform.catalogueUrl).pathname.slice(1))
  const client = await connectClient(catalogueAsOwner).catch((error: Error) => error)
  if (client instanceof Error) {
    t.match(client.message, /permission denied/)
  } else {
    await t.rejects(client.query('select jwt_secret from baseplane.projects'), /permission denied for schema baseplane/)
    await client.end()
  }
  const own = await connectClient(ownerUrlOf(a.record))
  t.teardown(() => own.end())
  await t.rejects(own.query('set role service_role'), /permission denied to set role/)
  await t.rejects(own.query(`set role "${b.record.dbOwnerRole}"`), /permission denied to set role/)
  await t.rejects(own.query('create database sneaky'), /permission denied to create database/)
  await t.rejects(own.query('create role sneaky'), /permission denied to create role/)
})

t.test('the API login role can only become the three API roles', async (t) => {
  const api = apiDatabaseOf(a.record)
  const client = await connectClient(urlAs(api.user, api.password, api.database))
  t.teardown(() => client.end())
  for (const role of ['anon', 'authenticated', 'service_role']) {
    await client.query(`set role ${role}`)
    await client.query('reset role')
  }
  await t.rejects(client.query(`set role "${a.record.dbOwnerRole}"`), /permission denied to set role/)
  await t.rejects(client.query(`create table public.x (id int)`), /permission denied for schema public/)
})
