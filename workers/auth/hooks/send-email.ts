// The send email hook (GoTrue's internal/api/mail.go, hooks): with one set,
// every mail Auth would send goes to it instead of SMTP or the outbox, as
// {metadata, user, email_data}. A database function gets it in the request's
// transaction; an HTTPS endpoint gets it signed with Standard Webhooks. A
// failure or refusal fails the request, whose transaction then rolls back.
import crypto from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Queryable } from '../db/pool.ts'
import { userById } from '../db/users.ts'
import { authErrors, type AuthError } from '../errors.ts'
import { log } from '../../../lib/log.ts'
import { signedWebhookHeaders } from '../../../lib/webhooks.ts'
import { userJson } from '../serialize.ts'
import { hookOutputError } from './output.ts'
import { runPgHook } from './pg-hook.ts'
import type { HttpHook, PgHook } from './settings.ts'

const NAME = 'send_email'

/** GoTrue's HTTP hook limits: per-attempt timeout, attempts, backoff, answer size. */
export const HTTP_HOOK = { timeoutMs: 5000, attempts: 3, backoffMs: 2000, maxAnswerBytes: 200 * 1024 } as const

/** GoTrue's email_data. Secure email change: token + token_hash_new are for the current address, token_new + token_hash for the new one. */
export interface EmailData {
  token: string
  token_hash: string
  redirect_to: string
  email_action_type: string
  site_url: string
  token_new: string
  token_hash_new: string
}

export interface HookedMail {
  userId: string
  ip: string
  data: EmailData
}

/** Hands one mail to the project's hook, inside the caller's transaction. */
export async function sendEmailThroughHook(client: Queryable, hook: PgHook | HttpHook, mail: HookedMail): Promise<void> {
  const user = await userById(client, mail.userId)
  const event = {
    metadata: { uuid: crypto.randomUUID(), time: new Date().toISOString(), name: NAME, ip_address: mail.ip },
    user: user ? userJson(user) : { id: mail.userId },
    email_data: mail.data,
  }
  const output = hook.kind === 'pg' ? await runPgHook(client, hook, NAME, event) : await postHook(hook, event)
  if (output === undefined || output === null) return
  if (typeof output !== 'object' || Array.isArray(output)) throw authErrors.hookInvalidOutput(NAME, 'output is not a JSON object')
  const refusal = hookOutputError(NAME, output as Record<string, unknown>)
  if (refusal) throw refusal
}

/** POSTs the event as GoTrue's HTTP hooks do: 5 s per attempt, 3 attempts 2 s apart on timeouts (and 429/503 with Retry-After). */
async function postHook(hook: HttpHook, event: unknown): Promise<unknown> {
  const body = JSON.stringify(event)
  for (let attempt = 1; ; attempt++) {
    const last = attempt >= HTTP_HOOK.attempts
    const id = crypto.randomUUID()
    const timestamp = Math.floor(Date.now() / 1000)
    let response: Response
    try {
      response = await fetch(hook.uri, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signedWebhookHeaders(hook.secrets, id, timestamp, body) },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(HTTP_HOOK.timeoutMs),
      })
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError'
      log.error('auth hook unreachable', error, { hook: NAME, attempt })
      if (!timedOut) throw authErrors.hookFailed(NAME, hook.uri)
      if (last) throw authErrors.hookTimeoutAfterRetry()
      await sleep(HTTP_HOOK.backoffMs)
      continue
    }
    if (response.status === 204) return undefined
    if ((response.status === 429 || response.status === 503) && response.headers.has('retry-after') && !last) {
      await response.body?.cancel()
      await sleep(HTTP_HOOK.backoffMs)
      continue
    }
    return readAnswer(hook, response)
  }
}

async function readAnswer(hook: HttpHook, response: Response): Promise<unknown> {
  const length = Number(response.headers.get('content-length') ?? 0)
  if (length > HTTP_HOOK.maxAnswerBytes) {
    await response.body?.cancel()
    throw authErrors.hookPayloadOverSizeLimit()
  }
  const text = await response.text()
  if (Buffer.byteLength(text) > HTTP_HOOK.maxAnswerBytes) throw authErrors.hookPayloadOverSizeLimit()
  const json = /^application\/json\b/i.test(response.headers.get('content-type') ?? '')
  if (response.status === 200 || response.status === 202) {
    if (!json) throw authErrors.hookPayloadInvalidContentType()
    try {
      return text === '' ? undefined : JSON.parse(text)
    } catch {
      throw authErrors.hookInvalidOutput(NAME, 'output is not valid JSON')
    }
  }
  // Any other status: the hook's own refusal when it says one, else a failure (GoTrue's bare 500, here 502).
  let refusal: AuthError | undefined
  try {
    const parsed = json ? JSON.parse(text) : undefined
    if (typeof parsed === 'object' && parsed !== null) refusal = hookOutputError(NAME, parsed as Record<string, unknown>)
  } catch {}
  log.error('auth hook answered an error status', undefined, { hook: NAME, status: response.status })
  throw refusal ?? authErrors.hookFailed(NAME, hook.uri)
}
