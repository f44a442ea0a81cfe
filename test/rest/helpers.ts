// Fixtures of the data API tests: a whole platform (uWS data plane, the rest
// worker pool), a project, an owner connection for DDL, and the unmodified
// supabase-js client as anon, as service_role and as a signed-in user (a JWT
// signed with the project's secret, `sub` set).
import { createClient, type SupabaseClient } from '@supabase/supabase-js'
import pg from 'pg'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { signJwt } from '../../lib/jwt.ts'
import { request, type Reply } from '../helpers/http.ts'
import { startTestPlatform, type TestPlatform, type TestProject } from '../helpers/platform.ts'

interface Teardown {
  teardown(fn: () => unknown): void
}

export interface RestFixture {
  platform: TestPlatform
  project: TestProject
  /** Runs SQL as the project's owner role. */
  sql: (text: string, values?: unknown[]) => Promise<pg.QueryResult>
  anon: () => SupabaseClient
  service: () => SupabaseClient
  /** A client signed in as `sub` (role authenticated). */
  user: (sub: string) => Promise<SupabaseClient>
  tokenFor: (sub: string) => string
  /** A raw request to `{base_url}/rest/v1{path}` with the anon key (headers override). */
  raw: <T = unknown>(path: string, options?: { method?: string; headers?: Record<string, string>; body?: string | object }) => Promise<Reply<T>>
}

const clientOptions = { auth: { persistSession: false, autoRefreshToken: false } }

export async function restProject(t: Teardown, setup?: string, platform?: TestPlatform, env: Record<string, string> = {}): Promise<RestFixture> {
  const p = platform ?? (await startTestPlatform(t, { BASEPLANE_REST_THREADS: '1', ...env }))
  const project = await p.createProject({ name: 'REST test' })
  const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
  owner.on('error', () => {})
  await owner.connect()
  t.teardown(() => owner.end())
  if (setup) await owner.query(setup)
  const tokenFor = (sub: string) =>
    signJwt(project.record.jwtSecret, { sub, role: 'authenticated', aud: 'authenticated', exp: Math.floor(Date.now() / 1000) + 600 })
  return {
    platform: p,
    project,
    sql: (text, values) => owner.query(text, values),
    anon: () => createClient(project.baseUrl, project.anonKey, clientOptions),
    service: () => createClient(project.baseUrl, project.serviceRoleKey, clientOptions),
    user: async (sub) =>
      createClient(project.baseUrl, project.anonKey, { ...clientOptions, global: { headers: { authorization: `Bearer ${tokenFor(sub)}` } } }),
    tokenFor,
    raw: (path, options = {}) =>
      request(`${project.baseUrl}/rest/v1${path}`, { ...options, headers: { apikey: project.anonKey, ...(options.headers ?? {}) } }),
  }
}
