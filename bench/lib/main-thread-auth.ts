// The benchmark's peer for the price of the worker hop (issue 15): a minimal
// uWebSockets.js server answering `POST /token?grant_type=refresh_token` and
// `GET /user` on the main thread. Per request it does what the platform does
// minus the hop to an auth worker thread and the routing around it: the same
// apikey and Bearer checks (data-plane/gate.ts, verified tokens cached), the
// same statements (workers/auth/db) as baseplane_auth_admin, the same access
// token claims signed with the project's key in use, the same user JSON.
import uWS from '@based/uws'
import pg from 'pg'
import { Gate } from '../../data-plane/gate.ts'
import type { ProjectRecord } from '../../lib/catalogue.ts'
import { signAccessToken } from '../../lib/jwt.ts'
import { rotateRefreshToken, type RefreshedRow } from '../../workers/auth/db/sessions.ts'
import { userWithSession } from '../../workers/auth/db/users.ts'
import { userJson } from '../../workers/auth/serialize.ts'
import { accessTokenClaims, newRefreshToken } from '../../workers/auth/tokens.ts'

export interface MainThreadAuth {
  /** `{origin}/auth/v1`, as the platform's base for the same paths. */
  base: string
  close(): Promise<void>
}

const JWT_EXPIRY_SECONDS = 3600

function session(project: ProjectRecord, baseUrl: string, row: RefreshedRow, refreshToken: string): string {
  const now = Date.now()
  const iat = Math.floor(now / 1000)
  const claims = accessTokenClaims(baseUrl, row, row.session_id, row.aal, row.amr ?? [], iat, JWT_EXPIRY_SECONDS)
  return JSON.stringify({
    access_token: signAccessToken(project, claims, now),
    token_type: 'bearer',
    expires_in: JWT_EXPIRY_SECONDS,
    expires_at: iat + JWT_EXPIRY_SECONDS,
    refresh_token: refreshToken,
    user: userJson(row),
  })
}

function readBody(res: uWS.HttpResponse): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    res.onData((chunk, isLast) => {
      chunks.push(Buffer.from(Buffer.from(chunk)))
      if (isLast) resolve(Buffer.concat(chunks).toString('utf8'))
    })
  })
}

/** Serves `project` on a free port; `pool` connects as the project's API login role. */
export async function startMainThreadAuth(project: ProjectRecord, baseUrl: string, pool: pg.Pool): Promise<MainThreadAuth> {
  const gate = new Gate()
  const app = uWS.App()

  /** Runs `work` once headers are read; answers its [status, body], or 500 on a throw. */
  const answer = (res: uWS.HttpResponse, work: () => Promise<[number, string]>) => {
    let aborted = false
    res.onAborted(() => (aborted = true))
    work().then(
      ([status, body]) => {
        if (!aborted) res.cork(() => res.writeStatus(String(status)).writeHeader('content-type', 'application/json').end(body))
      },
      (error: unknown) => {
        if (!aborted) res.cork(() => res.writeStatus('500').end(JSON.stringify({ message: String(error) })))
      },
    )
  }

  app.post('/auth/v1/token', (res, req) => {
    const apikey = req.getHeader('apikey')
    const grant = new URLSearchParams(req.getQuery() ?? '').get('grant_type')
    const body = readBody(res)
    answer(res, async () => {
      if (gate.keyRole(project, apikey) === undefined) return [401, '{"code":"invalid_api_key"}']
      if (grant !== 'refresh_token') return [400, '{"code":"unsupported_grant_type"}']
      const token = (JSON.parse(await body) as { refresh_token?: string }).refresh_token ?? ''
      const next = newRefreshToken()
      const row = await rotateRefreshToken(pool, token, next, '127.0.0.1')
      if (row === undefined) return [400, '{"code":"refresh_token_not_found"}']
      return [200, session(project, baseUrl, row, next)]
    })
  })

  app.get('/auth/v1/user', (res, req) => {
    const apikey = req.getHeader('apikey')
    const authorization = req.getHeader('authorization')
    answer(res, async () => {
      if (gate.keyRole(project, apikey) === undefined) return [401, '{"code":"invalid_api_key"}']
      const identity = gate.cachedIdentity(project, apikey, authorization) ?? (await gate.identify(project, apikey, authorization))
      const claims = identity.claims
      const row = await userWithSession(pool, claims.sub as string, (claims.session_id as string | undefined) ?? null)
      if (row === undefined || !row.session_ok) return [403, '{"code":"session_not_found"}']
      return [200, JSON.stringify(userJson(row))]
    })
  })

  const socket = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
    app.listen('127.0.0.1', 0, (listening) => (listening ? resolve(listening) : reject(new Error('the main-thread peer could not listen'))))
  })
  return {
    base: `http://127.0.0.1:${uWS.us_socket_local_port(socket)}/auth/v1`,
    async close() {
      uWS.us_listen_socket_close(socket)
    },
  }
}
