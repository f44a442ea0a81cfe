// Existing projects are moved to the platform's login roles in place (issue 36
// item 1): a project left as 0.6.0 made it (its API role a member of Auth's
// roles and holding Push's keys, no auth or platform login role, the counters
// writable by Auth's role) is brought to the new shape by the upgrade every
// start runs, and its Auth and Push answer afterwards.
import { createClient } from '@supabase/supabase-js'
import t from 'tap'
import { upgradeAllProjects } from '../../control-plane/projects.ts'
import { platformLoginName } from '../../lib/db/platform-logins.ts'
import { adminQuery, serverUrl, withDatabase } from '../helpers/db.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const test = await startTestPlatform(t)
const project = await test.createProject({ auth: true, push: true })
const { record } = project
const api = record.dbApiRole
const auth = platformLoginName(api, 'auth')
const platform = platformLoginName(api, 'platform')
const server = await serverUrl()
const inProject = withDatabase(server, record.dbName)

/** What the roles may do, read as the admin. */
async function shape(): Promise<Record<string, unknown>> {
  const { rows } = await adminQuery<Record<string, unknown>>(
    inProject,
    `select
       (select coalesce(array_agg(m.rolname::text order by m.rolname), '{}')::text[] from pg_auth_members a join pg_roles m on m.oid = a.roleid
         where a.member = (select oid from pg_roles where rolname = $1) and m.rolname <> 'pg_use_reserved_connections') as api_member_of,
       exists (select from pg_roles where rolname = $2) as auth_login,
       exists (select from pg_roles where rolname = $3) as platform_login,
       has_schema_privilege($1, 'push', 'usage') as api_push_usage,
       has_table_privilege($1, 'push.credentials', 'select') as api_reads_credentials,
       has_table_privilege('baseplane_auth_admin', 'auth.monthly_active_user_counts', 'delete') as auth_admin_deletes_counters`,
    [api, auth, platform],
  )
  return rows[0]!
}

t.test('a project as 0.6.0 made it is moved to the new roles by the upgrade', async (t) => {
  t.match(await shape(), { api_member_of: ['anon', 'authenticated', 'service_role'], auth_login: true, platform_login: true, api_reads_credentials: false })

  // Back to 0.6.0's shape.
  await adminQuery(inProject, `drop owned by "${auth}", "${platform}"`)
  await adminQuery(server, `drop role "${auth}"; drop role "${platform}"`)
  await adminQuery(
    inProject,
    `grant baseplane_auth_admin, supabase_auth_admin to "${api}";
     grant usage on schema push to "${api}";
     grant select, insert, update, delete on push.credentials to "${api}";
     grant insert, update, delete on auth.monthly_active_users, auth.monthly_active_user_counts to baseplane_auth_admin;
     drop function push.deactivate_devices(uuid[], text[], timestamptz[]);
     delete from baseplane.migrations where (migration_set, version) in (('project', 30), ('push', 4))`,
  )
  t.match(await shape(), {
    api_member_of: ['anon', 'authenticated', 'baseplane_auth_admin', 'service_role', 'supabase_auth_admin'],
    auth_login: false,
    platform_login: false,
    api_reads_credentials: true,
    auth_admin_deletes_counters: true,
  })

  const { applied } = await upgradeAllProjects(test.platform.controlPlane)
  t.same(applied.get(record.ref), [30], 'the project SQL of the new roles applied')
  t.same(await shape(), {
    api_member_of: ['anon', 'authenticated', 'service_role'],
    auth_login: true,
    platform_login: true,
    api_push_usage: false,
    api_reads_credentials: false,
    auth_admin_deletes_counters: false,
  })
  const { rows } = await adminQuery<{ rolconnlimit: number }>(server, 'select rolconnlimit from pg_roles where rolname = any($1) order by rolname', [[api, auth, platform]])
  t.equal(new Set(rows.map((row) => row.rolconnlimit)).size, 1, "the new roles have the API role's connection limit")
})

t.test('Auth and Push answer on the new roles', async (t) => {
  const supabase = createClient(project.baseUrl, project.anonKey, { auth: { persistSession: false, autoRefreshToken: false } })
  const { data, error } = await supabase.auth.signUp({ email: 'upgraded@example.test', password: 'correct horse battery' })
  t.error(error)
  t.ok(data.user?.id)
  const vapid = await fetch(`${project.baseUrl}/push/v1/vapid`, { headers: { apikey: project.anonKey } })
  t.equal(vapid.status, 200)
  const credentials = await fetch(`${project.baseUrl}/push/v1/credentials`, { headers: { apikey: project.serviceRoleKey, authorization: `Bearer ${project.serviceRoleKey}` } })
  t.equal(credentials.status, 200, await credentials.clone().text())
})
