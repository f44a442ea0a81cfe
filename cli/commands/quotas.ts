// `baseplane projects quotas REF [...]`: a project's monthly quotas (its
// plan's, with the operator's overrides), what it used this month, and
// changing the overrides (control-plane/quotas.ts).
import { projectQuotas, readQuotaFigure, setQuotaOverrides, type QuotaChange, type QuotaView } from '../../control-plane/quotas.ts'
import { isSizeQuota, QUOTA_LABELS, QUOTA_NAMES, quotaFigureText, type QuotaName, type QuotaPolicy } from '../../lib/plans.ts'
import { refusedValue, stringOption, table, type Command } from '../command.ts'

const FLAGS: Record<string, QuotaName> = {
  'active-users': 'monthly_active_users',
  'push-deliveries': 'push_deliveries',
  mail: 'mail_sent',
  'database-size': 'database_size_bytes',
  'storage-size': 'storage_size_bytes',
  'storage-egress': 'storage_egress_bytes',
}

const USAGE = 'projects quotas REF [--policy bill|cap|plan] [--active-users N] [--push-deliveries N] [--mail N] [--database-size SIZE] [--storage-size SIZE] [--storage-egress SIZE]'

function show(view: QuotaView): string {
  const figure = (name: QuotaName, value: number | null) => (value === null ? 'unlimited' : quotaFigureText(name, value))
  const rows = QUOTA_NAMES.map((name) => {
    const limit = view.figures[name]
    const used = view.used[name]
    const share = limit === null || used === null || limit === 0 ? '' : `${Math.floor((used * 100) / limit)}%`
    const own = view.overrides.figures !== undefined && name in view.overrides.figures
    return [QUOTA_LABELS[name], figure(name, limit) + (own ? ' (this project)' : ''), used === null ? 'not sampled yet' : figure(name, used), share]
  })
  const policy =
    view.policy === 'cap'
      ? 'cap: what would pass a figure is refused'
      : 'bill: counted, never refused'
  return [
    `Quotas of ${view.ref} (plan ${view.plan}; ${policy}${view.overrides.policy === undefined ? '' : ', set for this project'})`,
    `This month: ${view.month} (UTC); the monthly quotas reset at ${view.resets_at}`,
    ...(view.read_only ? ['Read-only: its database reached its size quota (reads still answer)'] : []),
    '',
    table([['QUOTA', 'FIGURE', 'USED', 'SHARE'], ...rows]),
  ].join('\n')
}

export const quotaCommands: Command[] = [
  {
    words: ['projects', 'quotas'],
    positionals: ['REF'],
    usage: USAGE,
    summary: "Show (or change) a project's monthly quotas and what it used this month",
    options: { policy: { type: 'string' }, ...Object.fromEntries(Object.keys(FLAGS).map((flag) => [flag, { type: 'string' as const }])) },
    optionValues: { policy: 'bill|cap|plan', 'active-users': 'N', 'push-deliveries': 'N', mail: 'N', 'database-size': 'SIZE', 'storage-size': 'SIZE', 'storage-egress': 'SIZE' },
    optionHelp: {
      policy: "past a figure: bill (count, never refuse) or cap (refuse what would pass it); plan: the plan's",
      'active-users': 'monthly active users (users who signed in or refreshed a token this month)',
      'push-deliveries': 'push deliveries a month',
      mail: "auth mail the platform sends a month (a project's own send email hook is not counted)",
      'database-size': 'database size, such as 500MB or 8GB (past it under cap: read-only)',
      'storage-size': "Storage's stored bytes, such as 1GB (past it under cap: uploads refused)",
      'storage-egress': "Storage's bytes sent a month, such as 5GB (past it under cap: downloads refused until the month resets)",
    },
    notes: 'Each figure is a whole number, "unlimited" (no quota) or "plan" (the plan\'s). Applies from the next request.',
    async run(context, args) {
      const ref = args.positionals[0]!
      const change: QuotaChange = { figures: {} }
      const policy = stringOption(args, 'policy', false)
      if (policy !== undefined) {
        if (policy !== 'bill' && policy !== 'cap' && policy !== 'plan') throw refusedValue(`--policy must be bill, cap or plan, got "${policy}"`)
        change.policy = policy === 'plan' ? null : (policy as QuotaPolicy)
      }
      for (const [flag, name] of Object.entries(FLAGS)) {
        const raw = stringOption(args, flag, false)
        if (raw === undefined) continue
        try {
          change.figures![name] = raw === 'plan' ? null : readQuotaFigure(name, raw)
        } catch {
          throw refusedValue(`--${flag} must be a whole number of at least 0${isSizeQuota(name) ? ' or a size such as 500MB or 8GB' : ''}, "unlimited" or "plan", got "${raw}"`)
        }
      }
      const controlPlane = await context.controlPlane()
      const changing = change.policy !== undefined || Object.keys(change.figures!).length > 0
      return changing ? setQuotaOverrides(controlPlane, ref, change) : projectQuotas(controlPlane, ref)
    },
    human: show,
  },
]
