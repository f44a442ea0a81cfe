// A member's way to the platform from the command line (issue 42): the saved
// login (`baseplane login`: the platform's address and a personal access
// token in the user's config, readable by the user alone), and a command's
// remote form run as its admin API call with the token.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { BaseplaneError } from '../lib/errors.ts'
import type { RemoteCall } from './command.ts'

export interface SavedLogin {
  url: string
  token: string
}

/** `$XDG_CONFIG_HOME/baseplane/config.json`, else `~/.config/baseplane/config.json`. */
export function loginFile(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(env.HOME ?? os.homedir(), '.config')
  return path.join(base, 'baseplane', 'config.json')
}

export function savedLogin(): SavedLogin | undefined {
  let text: string
  try {
    text = fs.readFileSync(loginFile(), 'utf8')
  } catch {
    return undefined
  }
  try {
    const parsed = JSON.parse(text) as Partial<SavedLogin>
    if (typeof parsed.url === 'string' && typeof parsed.token === 'string') return { url: parsed.url, token: parsed.token }
  } catch {
    // A file not ours to read: as if there were none; `login` writes it again.
  }
  return undefined
}

/** Writes the login (mode 0600, its folder 0700); answers the file. */
export function saveLogin(login: SavedLogin): string {
  const file = loginFile()
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  const temporary = `${file}.${process.pid}.tmp`
  fs.writeFileSync(temporary, JSON.stringify(login, null, 2) + '\n', { mode: 0o600 })
  fs.renameSync(temporary, file)
  fs.chmodSync(file, 0o600)
  return file
}

/** Removes the saved login; answers whether there was one. */
export function forgetLogin(): boolean {
  try {
    fs.rmSync(loginFile())
    return true
  } catch {
    return false
  }
}

/** One admin API call with the member's token; the platform's refusal thrown as it answered it ({code, message}, its status). */
export async function callAdminApi(url: string, token: string, call: RemoteCall): Promise<unknown> {
  let response: Response
  try {
    response = await fetch(`${url}/platform/v1${call.path}`, {
      method: call.method,
      headers: { authorization: `Bearer ${token}`, ...(call.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
    })
  } catch (error) {
    throw new BaseplaneError('unreachable', `could not reach ${url}: ${(error as Error).message}`, 503)
  }
  const text = await response.text()
  let body: unknown = null
  try {
    body = text ? JSON.parse(text) : null
  } catch {
    throw new BaseplaneError('bad_answer', `${url} did not answer as a Baseplane admin API (status ${response.status})`, 502)
  }
  if (!response.ok) {
    const refusal = (body ?? {}) as { code?: string; message?: string }
    throw new BaseplaneError(refusal.code ?? 'failed', refusal.message ?? `the platform answered ${response.status}`, response.status)
  }
  return body
}

/** The token's account, which `login` checks before saving it. */
export async function verifyLogin(url: string, token: string): Promise<{ email: string }> {
  return (await callAdminApi(url, token, { method: 'GET', path: '/account' })) as { email: string }
}
