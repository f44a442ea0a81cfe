// What the Storage tests share: a supabase-js client as the service role or as
// a user of a project, the project's owner connection (its policies), and a
// body of a given size made without holding it whole.
import { createClient, type SupabaseClient } from '@supabase/supabase-js'
import pg from 'pg'
import { ownerUrlOf } from '../../lib/catalogue.ts'
import { signJwt } from '../../lib/jwt.ts'
import type { TestProject } from '../helpers/platform.ts'

export function serviceClient(project: TestProject): SupabaseClient {
  return createClient(project.baseUrl, project.serviceRoleKey, { auth: { persistSession: false } })
}

/** A user's token for `project` (authenticated, the given `sub`), valid for an hour. */
export function userToken(project: TestProject, sub: string, claims: Record<string, unknown> = {}): string {
  return signJwt(project.record.jwtSecret, { aud: 'authenticated', role: 'authenticated', sub, exp: Math.floor(Date.now() / 1000) + 3600, ...claims })
}

/** supabase-js as a signed-in user (its token on every request), or as anon without `sub`. */
export function userClient(project: TestProject, sub?: string): SupabaseClient {
  const headers: Record<string, string> = sub === undefined ? {} : { Authorization: `Bearer ${userToken(project, sub)}` }
  return createClient(project.baseUrl, project.anonKey, { auth: { persistSession: false }, global: { headers } })
}

/** The project's owner (its developers' role), connected for policies; closed when `t` ends. */
export async function ownerOf(t: { teardown(fn: () => unknown): void }, project: TestProject): Promise<pg.Client> {
  const owner = new pg.Client({ connectionString: ownerUrlOf(project.record) })
  owner.on('error', () => {})
  await owner.connect()
  t.teardown(() => owner.end())
  return owner
}

/** `size` bytes of a repeating pattern, made in 64 KiB chunks as they are read. */
export async function* patterned(size: number, seed = 7): AsyncGenerator<Uint8Array> {
  const chunk = Buffer.alloc(64 * 1024)
  for (let i = 0; i < chunk.length; i++) chunk[i] = (i * seed + 13) % 251
  for (let sent = 0; sent < size; sent += chunk.length) yield chunk.subarray(0, Math.min(chunk.length, size - sent))
}

export async function bytesOf(size: number, seed = 7): Promise<Uint8Array<ArrayBuffer>> {
  const parts: Buffer[] = []
  for await (const part of patterned(size, seed)) parts.push(Buffer.from(part))
  return new Uint8Array(Buffer.concat(parts))
}

/** A setup step's answer, its error thrown (the file's setup runs before any subtest can assert). */
export function succeeded<T extends { error: unknown }>(answer: T): T {
  if (answer.error !== null) throw answer.error
  return answer
}
