// `baseplane mail list REF`: the project's auth mail (bodies kept when the
// platform has no SMTP server and mail goes to the outbox).
import { listMail, type OutboxMail } from '../../control-plane/auth-settings.ts'
import { integerOption, type Command } from '../command.ts'

export const mailCommands: Command[] = [
  {
    words: ['mail', 'list'],
    positionals: ['REF'],
    usage: 'mail list REF [--limit N]',
    summary: "List a project's auth mail, newest first (the outbox when SMTP_URL is not set)",
    options: { limit: { type: 'string' } },
    optionHelp: { limit: 'how many mails to show, 1 to 1000 (default 50)' },
    async run(context, args) {
      const limit = integerOption(args, 'limit', { min: 1, max: 1000 }) ?? 50
      return listMail(await context.controlPlane(), args.positionals[0]!, limit)
    },
    human: (rows: OutboxMail[]) =>
      rows.length === 0
        ? 'No mail.'
        : rows
            .map((m) => `#${m.id} ${m.created_at} ${m.kind} to ${m.to} (${m.delivery})\nSubject: ${m.subject}${m.html ? `\n${m.html.trim()}` : ''}`)
            .join('\n\n'),
  },
]
