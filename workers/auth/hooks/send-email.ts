// The send email hook (GoTrue's internal/api/mail.go, hooks): with one set,
// every mail Auth would send goes to it instead of SMTP or the outbox, as
// {metadata, user, email_data}. A database function gets it in the request's
// transaction; an HTTPS endpoint gets it signed with Standard Webhooks. A
// failure or refusal fails the request, whose transaction then rolls back.
import crypto from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Queryable } from '../db/pool.ts'
import { userById } from '../db/users.ts'
import { AuthError, authErrors } from '../errors.ts'
import { AnswerBoundError, fetchBounded } from '../../../lib/bounded-body.ts'
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

/**
 * POSTs the event as GoTrue's HTTP hooks do (supabase/auth internal/hooks/hookhttp/hookhttp.go:
 * defaultHTTPHookTimeout 5 s, 3 attempts, 2 s backoff, payloadLimit 200 * 1024 bytes). Each attempt
 * has one 5 s deadline over connect, headers and body (Go's http.Client.Timeout includes reading the
 * body), so an endpoint that trickles its answer times the attempt out like one that never answers;
 * a timed-out attempt is tried again (and 429/503 with Retry-After). The answer is read with a running
 * count (lib/bounded-body.ts): past 200 KiB the stream is cancelled, not read on.
 */
async function postHook(hook: HttpHook, event: unknown): Promise<unknown> {
  const body = JSON.stringify(event)
  for (let attempt = 1; ; attempt++) {
    const last = attempt >= HTTP_HOOK.attempts
    const id = crypto.randomUUID()
    const timestamp = Math.floor(Date.now() / 1000)
    let answer: Attempt
    try {
      answer = await attemptHook(hook, body, signedWebhookHeaders(hook.secrets, id, timestamp, body))
    } catch (error) {
      if (!(error instanceof AnswerBoundError)) {
        if (error instanceof AuthError) throw error
        log.error('auth hook unreachable', error, { hook: NAME, attempt })
        throw authErrors.hookFailed(NAME, hook.uri)
      }
      if (error.code === 'answer_too_large') throw authErrors.hookPayloadOverSizeLimit(HTTP_HOOK.maxAnswerBytes)
      log.error('auth hook did not answer in time', error, { hook: NAME, attempt })
      if (last) throw authErrors.hookTimeoutAfterRetry()
      await sleep(HTTP_HOOK.backoffMs)
      continue
    }
    if (answer === 'again') {
      if (last) throw authErrors.hookFailed(NAME, hook.uri)
      await sleep(HTTP_HOOK.backoffMs)
      continue
    }
    return answer === 'no output' ? undefined : outputOf(hook, answer)
  }
}

/** An attempt's answer: its status, whether it is JSON, and its text; `no output` for 204; `again` for 429/503 with Retry-After. */
type Attempt = { status: number; json: boolean; text: string } | 'no output' | 'again'

/** One attempt, its answer read under the bounds (AnswerBoundError past one). */
async function attemptHook(hook: HttpHook, body: string, signature: Record<string, string>): Promise<Attempt> {
  const answer = await fetchBounded(
    hook.uri,
    {
      method: 'POST',
      // identity, as GoTrue asks: the declared length is the body's, and no inflating of a compressed answer.
      headers: { 'content-type': 'application/json', 'accept-encoding': 'identity', ...signature },
      body,
      redirect: 'manual',
    },
    { maxBytes: HTTP_HOOK.maxAnswerBytes, timeoutMs: HTTP_HOOK.timeoutMs },
  )
  if (answer.status === 204) {
    await answer.discard()
    return 'no output'
  }
  if ((answer.status === 429 || answer.status === 503) && answer.headers.has('retry-after')) {
    await answer.discard()
    return 'again'
  }
  const json = /^application\/json\b/i.test(answer.headers.get('content-type') ?? '')
  const ok = answer.status === 200 || answer.status === 202
  // GoTrue checks a success's Content-Type before it reads a byte of the body.
  if (ok && !json) {
    await answer.discard()
    throw authErrors.hookPayloadInvalidContentType()
  }
  if (ok) return { status: answer.status, json, text: await answer.text() }
  // An error status fails the call whatever its body holds: a body past a bound only loses the refusal it might say.
  const text = await answer.text().catch((error: unknown) => {
    if (error instanceof AnswerBoundError) return ''
    throw error
  })
  return { status: answer.status, json, text }
}

function outputOf(hook: HttpHook, { status, json, text }: Exclude<Attempt, string>): unknown {
  if (status === 200 || status === 202) {
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
  log.error('auth hook answered an error status', undefined, { hook: NAME, status })
  throw refusal ?? authErrors.hookFailed(NAME, hook.uri)
}
