// `baseplane mail list REF`: the project's auth mail (bodies kept when the
// platform has no SMTP server and mail goes to the outbox).
import { listMail, type OutboxMail } from '../../control-plane/auth-settings.ts'
import { stringOption, UsageError, type Command } from '../command.ts'

export const mailCommands: Command[] = [
  {
    words: ['mail', 'list'],
    positionals: ['REF'],
    usage: 'mail list REF [--limit N]',
    summary: "List a project's auth mail, newest first (the outbox when SMTP_URL is not set)",
    options: { limit: { type: 'string' } },
    async run(context, args) {
      const raw = stringOption(args, 'limit', false)
      if (raw !== undefined && (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 1000)) throw new UsageError(`--limit must be a whole number from 1 to 1000, got "${raw}"`)
      return listMail(await context.controlPlane(), args.positionals[0]!, raw === undefined ? 50 : Number(raw))
    },
    human: (rows: OutboxMail[]) =>
      rows.length === 0
        ? 'No mail.'
        : rows
            .map((m) => `#${m.id} ${m.created_at} ${m.kind} to ${m.to} (${m.delivery})\nSubject: ${m.subject}${m.html ? `\n${m.html.trim()}` : ''}`)
            .join('\n\n'),
  },
]
