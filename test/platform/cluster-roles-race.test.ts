// Two platforms (nodes of two catalogues, or server URLs naming different
// databases) starting at once on a fresh server both make the cluster-wide
// roles: the migrations' advisory lock is a database's, so they may collide;
// the one that does runs its idempotent script again and starts, rather than
// failing with the role's unique key (as two test platforms once did).
import t from 'tap'
import { ensureClusterRoles } from '../../control-plane/project-database.ts'
import { startTemporary } from '../../lib/db/embedded.ts'
import { adminUrlFor } from '../../lib/db/server-url.ts'
import { adminQuery } from '../helpers/db.ts'

t.test('concurrent runs through different databases of a fresh server all succeed', async (t) => {
  for (let round = 0; round < 2; round++) {
    const server = await startTemporary()
    t.teardown(() => server.stop())
    for (const name of ['one', 'two', 'three']) await adminQuery(server.url, `create database ${name}`)
    const urls = ['postgres', 'one', 'two', 'three'].map((database) => adminUrlFor(server.url, database))
    const results = await Promise.allSettled(urls.map((url) => ensureClusterRoles(url)))
    t.same(results.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'ok')), ['ok', 'ok', 'ok', 'ok'], `round ${round + 1}: every run succeeded`)
    const { rows } = await adminQuery<{ rolname: string }>(server.url, `select rolname from pg_roles where rolname in ('anon', 'authenticated', 'service_role', 'baseplane_auth_admin', 'supabase_auth_admin') order by rolname`)
    t.same(rows.map((r) => r.rolname), ['anon', 'authenticated', 'baseplane_auth_admin', 'service_role', 'supabase_auth_admin'], 'each role made once')
  }
})
