// Sends a project's auth mail: SMTP through nodemailer from the platform's
// sending domain when SMTP_URL is set, otherwise into the project's outbox
// (auth.mail_messages, listed by `baseplane mail list`). Every mail sent is
// recorded, and the per-project ceiling per hour is checked against that
// record under a transaction-scoped lock, so concurrent sends cannot pass it.
import nodemailer, { type Transporter } from 'nodemailer'
import type pg from 'pg'
import { log } from '../../../lib/log.ts'
import { mailTally } from '../../../lib/metrics/thread-tallies.ts'
import { mailSentLastHourLocked, platformMailThisMonth, recordMail } from '../db/mail-messages.ts'
import { quotaRefusal } from '../../../lib/plans.ts'
import type { WorkerOptions } from '../../../lib/service.ts'
import { authErrors } from '../errors.ts'
import type { AuthSettings } from '../settings.ts'
import { render, type TemplateKind, type TemplateValues } from './templates.ts'
import { sendEmailThroughHook, type HookedMail } from '../hooks/send-email.ts'

let transport: Transporter | undefined

/** GoTrue's "Error sending ... email" wording per kind. */
const FAILURE_NAME: Record<TemplateKind, string> = {
  confirmation: 'confirmation',
  recovery: 'recovery',
  magic_link: 'magic link',
  invite: 'invite',
  email_change: 'email change',
  reauthentication: 'reauthentication',
}

function smtpTransport(url: string): Transporter {
  transport ??= nodemailer.createTransport(url)
  return transport
}

export interface OutgoingMail {
  kind: TemplateKind
  to: string
  values: TemplateValues
  /** What the send email hook gets, when the project has one (hooks/send-email.ts). */
  hook: HookedMail
}

/** How a mail went: the project's send email hook, the platform's SMTP server, or the project's outbox. */
export type MailDelivery = 'hook' | 'smtp' | 'outbox'

/**
 * Renders and delivers one mail inside the caller's transaction: when the
 * delivery fails or the ceiling is reached the caller's writes roll back.
 * Answers how it went (the caller notes the platform's mail in the usage).
 * `delivery` is the process's mail configuration (a worker's options, or the
 * control plane's config when it sends an invitation itself). `cap`: the
 * project's monthly cap on the platform's mail (lib/plans.ts), checked under
 * the same lock as the hourly ceiling, so concurrent sends cannot pass it; a
 * send email hook's mail is the project's own and never capped.
 */
export async function sendMail(client: pg.ClientBase, settings: AuthSettings, delivery: WorkerOptions['mail'], cap: number | undefined, mail: OutgoingMail): Promise<MailDelivery> {
  if ((await mailSentLastHourLocked(client)) >= settings.mailPerHour) throw authErrors.overEmailRateLimit()
  const hooked = settings.hooks.sendEmail !== undefined
  if (cap !== undefined && !hooked && (await platformMailThisMonth(client)) >= cap) throw authErrors.overQuota(quotaRefusal('mail_sent', cap))
  const template = settings.templates[mail.kind]
  const subject = render(template.subject, mail.values, false)
  const hook = settings.hooks.sendEmail
  if (hook !== undefined) {
    // The project's own mail: only the hook sends it (GoTrue: it replaces SMTP); the record keeps the hourly ceiling.
    await sendEmailThroughHook(client, hook, mail.hook)
    await recordMail(client, { kind: mail.kind, recipient: mail.to, subject, html: null, delivery: 'hook' })
    mailTally.add([mail.kind, 'hook'])
    return 'hook'
  }
  const html = render(template.body, mail.values, true)
  const { smtpUrl, from } = delivery
  if (smtpUrl) {
    try {
      await smtpTransport(smtpUrl).sendMail({ from, to: mail.to, subject, html })
    } catch (error) {
      mailTally.add([mail.kind, 'smtp_failed'])
      log.error('auth mail delivery failed', error, { kind: mail.kind })
      throw authErrors.unexpected(`Error sending ${FAILURE_NAME[mail.kind]} email`)
    }
  }
  await recordMail(client, { kind: mail.kind, recipient: mail.to, subject, html: smtpUrl ? null : html, delivery: smtpUrl ? 'smtp' : 'outbox' })
  mailTally.add([mail.kind, smtpUrl ? 'smtp' : 'outbox'])
  return smtpUrl ? 'smtp' : 'outbox'
}
