// Projects for bench:tenants, each with auth enabled and one signed-in user.
// The users are written with SQL as the server's admin and their access
// tokens minted with the project's JWT secret, as the auth worker would
// (workers/auth/tokens.ts accessToken): signing up 1,000 users would cost
// 1,000 bcrypt hashes and measure nothing this benchmark is about.
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { adminUrlFor } from '../../lib/db/server-url.ts'
import type { ProjectRecord } from '../../lib/catalogue.ts'
import { signJwt } from '../../lib/jwt.ts'
import type { BenchPlatform } from './platform.ts'
import { createProject, setProjectProduct } from '../../control-plane/projects.ts'

/** Where tenants are made: a control plane, its default server (as admin), and the origin their tokens name as issuer. */
export interface TenantHost {
  platform: Pick<BenchPlatform['platform'], 'controlPlane'>
  serverUrl: string
  origin: string
}

export interface Tenant {
  record: ProjectRecord
  /** Path form of the project's base URL: /project/<ref>. */
  basePath: string
  /** A signed-in user's access token (GET /auth/v1/user). */
  userToken: string
}

export interface CreatedTenants {
  tenants: Tenant[]
  /** Per project, milliseconds: createProject, then setProjectProduct(auth). */
  createMs: number[]
  enableAuthMs: number[]
}

// Longer than GoTrue's hour: creating 1,000 projects and running the loads takes longer than that.
const TOKEN_SECONDS = 24 * 3600

/** A confirmed user with a session, written as the server's admin; their access token. `serverUrl`: the project's server. */
export async function signedInUser(bench: TenantHost, record: ProjectRecord, basePath: string, serverUrl = bench.serverUrl): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrlFor(serverUrl, record.dbName) })
  await client.connect()
  try {
    const email = `bench@${record.ref}.example.test`
    const appMetadata = { provider: 'email', providers: ['email'] }
    const { rows } = await client.query<{ user_id: string; session_id: string }>(
      `with u as (
         insert into auth.users (aud, role, email, email_confirmed_at, raw_app_meta_data, raw_user_meta_data)
         values ('authenticated', 'authenticated', $1, now(), $2, '{}') returning id
       )
       insert into auth.sessions (user_id) select id from u returning user_id, id as session_id`,
      [email, appMetadata],
    )
    const { user_id: sub, session_id } = rows[0]!
    const iat = Math.floor(Date.now() / 1000)
    return signJwt(record.jwtSecret, {
      iss: `${bench.origin}${basePath}/auth/v1`,
      sub,
      aud: 'authenticated',
      exp: iat + TOKEN_SECONDS,
      iat,
      email,
      phone: '',
      app_metadata: appMetadata,
      user_metadata: {},
      role: 'authenticated',
      aal: 'aal1',
      amr: [{ method: 'password', timestamp: iat }],
      session_id,
      is_anonymous: false,
    })
  } finally {
    await client.end()
  }
}

/** Creates `n` projects one after the other, as an operator would, timing each step. */
export async function createTenants(bench: TenantHost, n: number, progress: (done: number) => void): Promise<CreatedTenants> {
  const { controlPlane } = bench.platform
  const created: CreatedTenants = { tenants: [], createMs: [], enableAuthMs: [] }
  for (let i = 0; i < n; i++) {
    let started = performance.now()
    const project = await createProject(controlPlane, { name: `tenant ${i + 1}` })
    created.createMs.push(performance.now() - started)
    started = performance.now()
    const record = await setProjectProduct(controlPlane, project.ref, 'auth', true)
    created.enableAuthMs.push(performance.now() - started)
    const basePath = `/project/${record.ref}`
    created.tenants.push({ record, basePath, userToken: await signedInUser(bench, record, basePath) })
    progress(i + 1)
  }
  return created
}
