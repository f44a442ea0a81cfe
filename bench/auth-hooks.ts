// Token refreshes/s with a trivial custom access token hook (a plpgsql
// function adding one claim, workers/auth/hooks) against the same refreshes
// without it, same run, alternating rounds (bench/auth.ts runs it as section 6).
import pg from 'pg'
import { setAuthOptions } from '../control-plane/auth-settings.ts'
import type { ControlPlane } from '../control-plane/control-plane.ts'
import { ownerUrlOf, type ProjectRecord } from '../lib/catalogue.ts'
import { formatLoad, wrk, type LoadResult } from './lib/wrk.ts'
import { reportRates } from './lib/report.ts'

export interface HookBench {
  controlPlane: ControlPlane
  project: ProjectRecord
  base: string
  headers: Record<string, string>
  signIn: () => Promise<{ refresh_token: string }>
  /** A wrk script file refreshing each connection's chain from `tokens`. */
  refreshScript: (name: string, tokens: string[]) => string
  combine: (rounds: LoadResult[]) => LoadResult
  seconds: number
  connections: number
  rounds: number
}

export async function benchAccessTokenHook(b: HookBench): Promise<void> {
  const owner = new pg.Client({ connectionString: ownerUrlOf(b.project) })
  await owner.connect()
  await owner.query(`create or replace function public.bench_access_token_hook(event jsonb) returns jsonb language plpgsql as $$
      begin return jsonb_build_object('claims', (event->'claims') || '{"user_level": "gold"}'); end $$;
    grant usage on schema public to supabase_auth_admin;
    grant execute on function public.bench_access_token_hook to supabase_auth_admin;`)
  await owner.end()
  const uri = 'pg-functions://postgres/public/bench_access_token_hook'
  const without: LoadResult[] = []
  const withHook: LoadResult[] = []
  const run = async (hook: boolean) => {
    await setAuthOptions(b.controlPlane, b.project.ref, { hook_custom_access_token_uri: hook ? uri : null })
    const sessions = await Promise.all(Array.from({ length: b.connections }, b.signIn))
    const script = b.refreshScript(`hook-${hook}-${without.length}`, sessions.map((s) => s.refresh_token))
    return wrk(`${b.base}/token?grant_type=refresh_token`, { headers: b.headers, seconds: Math.max(1, Math.round(b.seconds / b.rounds)), connections: b.connections, threads: b.connections, script })
  }
  for (let round = 0; round < b.rounds; round++) {
    without.push(await run(false))
    withHook.push(await run(true))
  }
  await setAuthOptions(b.controlPlane, b.project.ref, { hook_custom_access_token_uri: null })
  const plain = b.combine(without)
  const hooked = b.combine(withHook)
  console.log(formatLoad('token refresh, access token hook', hooked))
  console.log(formatLoad('token refresh, no hook', plain))
  console.log(`ratio refresh with hook / without: ${(hooked.requestsPerSecond / plain.requestsPerSecond).toFixed(2)} (goal >= 0.8)${hooked.non2xx || plain.non2xx ? `  (non-2xx: ${hooked.non2xx} / ${plain.non2xx})` : ''}\n`)
  reportRates('auth', 'refresh with access token hook / without', hooked, 'token refresh, no hook', plain, { atLeast: 0.8 })
}
