// `baseplane usage [REF] [--month YYYY-MM] [--json]`: a project's usage in a
// billing month (UTC), or every project's (deleted ones too: their usage is
// kept for billing). A billing system reads the admin API's streamed export
// (`GET /platform/v1/usage`) instead; this is the operator's look.
import { openUsageExport, projectUsage, type ProjectUsageView, type UsageExportRow } from '../../control-plane/usage.ts'
import { PUSH_OUTCOMES, PUSH_PROVIDERS } from '../../lib/metrics/usage-counters.ts'
import { stringOption, table, type Command } from '../command.ts'

const SERVICES = ['auth', 'graphql', 'push', 'rest', 'other'] as const

/** 1234567 -> "1.2 MB" (powers of 1024, as pg_size_pretty). */
export function bytes(value: number | null): string {
  if (value === null) return 'not sampled yet'
  const units = ['bytes', 'kB', 'MB', 'GB', 'TB']
  let unit = 0
  let scaled = value
  while (scaled >= 1024 && unit < units.length - 1) {
    scaled /= 1024
    unit++
  }
  return unit === 0 ? `${value} bytes` : `${scaled.toFixed(1)} ${units[unit]}`
}

const sum = (counters: Record<string, number | string | null>, prefix: string) =>
  Object.entries(counters).reduce((total, [name, value]) => (name.startsWith(prefix) && typeof value === 'number' ? total + value : total), 0)

function pushLine(counters: Record<string, number>): string {
  const parts = PUSH_PROVIDERS.flatMap((provider) => PUSH_OUTCOMES.map((outcome) => [`${provider} ${outcome}`, counters[`push_${provider}_${outcome}`] ?? 0] as const))
    .filter(([, count]) => count > 0)
    .map(([what, count]) => `${what} ${count}`)
  return parts.length === 0 ? 'none' : parts.join(', ')
}

function projectHuman(view: ProjectUsageView): string {
  const t = view.totals
  const lines = [
    `Usage of ${view.ref} in ${view.month} (UTC)${view.deleted ? ' (project deleted; its usage is kept)' : ''}`,
    `requests        ${SERVICES.map((s) => `${s} ${t[`requests_${s}`]}`).join(', ')}`,
    `bytes out       ${SERVICES.map((s) => `${s} ${bytes(t[`bytes_out_${s}`]!)}`).join(', ')}`,
    `active users    ${view.active_users.total} (${view.active_users.authenticated} signed up, ${view.active_users.anonymous} anonymous)`,
    `auth            ${t.auth_sign_ins} sign-ins, ${t.auth_token_refreshes} token refreshes`,
    `mail sent       ${t.mail_sent}`,
    `push            ${pushLine(t)}`,
    `realtime        ${t.realtime_messages ?? 0} messages, at most ${t.realtime_peak_connections ?? 0} connections at once`,
    `database size   ${bytes(view.database_size.bytes)}${view.database_size.peak_bytes === null ? '' : ` (peak ${bytes(view.database_size.peak_bytes)}, sampled ${view.database_size.sampled_at})`}`,
  ]
  const active = view.days.filter((day) => Object.values(day.counters).some((v) => v > 0) || day.database_size_bytes !== null)
  if (active.length > 0) {
    lines.push(
      '',
      table([
        ['DAY', 'REQUESTS', 'BYTES OUT', 'SIGN-INS', 'REFRESHES', 'PUSH SENT', 'MAIL', 'REALTIME', 'DB SIZE'],
        ...active.map((day) => [
          day.date,
          String(sum(day.counters, 'requests_')),
          bytes(sum(day.counters, 'bytes_out_')),
          String(day.counters.auth_sign_ins),
          String(day.counters.auth_token_refreshes),
          String(PUSH_PROVIDERS.reduce((total, p) => total + (day.counters[`push_${p}_sent`] ?? 0), 0)),
          String(day.counters.mail_sent),
          String(day.counters.realtime_messages ?? 0),
          day.database_size_bytes === null ? '' : bytes(day.database_size_bytes),
        ]),
      ]),
    )
  }
  return lines.join('\n')
}

function allHuman(result: { month: string; projects: UsageExportRow[] }): string {
  if (result.projects.length === 0) return `No usage in ${result.month}.`
  return table([
    ['REF', 'REQUESTS', 'BYTES OUT', 'ACTIVE USERS', 'SIGN-INS', 'PUSH SENT', 'MAIL', 'REALTIME', 'DB SIZE'],
    ...result.projects.map((row) => [
      row.ref,
      String(sum(row, 'requests_')),
      bytes(sum(row, 'bytes_out_')),
      String(row.active_users),
      String(row.auth_sign_ins),
      String(PUSH_PROVIDERS.reduce((total, p) => total + Number(row[`push_${p}_sent`] ?? 0), 0)),
      String(row.mail_sent),
      String(row.realtime_messages ?? 0),
      row.database_size_bytes === null ? '' : bytes(Number(row.database_size_bytes)),
    ]),
  ])
}

export const usageCommand: Command = {
  words: ['usage'],
  positionals: [],
  optionalPositionals: ['REF'],
  usage: 'usage [REF] [--month YYYY-MM] [--json]',
  summary: "A project's usage in a billing month (UTC), or every project's",
  options: { month: { type: 'string' } },
  optionHelp: { month: 'the billing month, a UTC calendar month (default: this one)' },
  notes:
    'Counts reach the catalogue once a minute per node (BASEPLANE_USAGE_FLUSH_MS). For a billing system, ' +
    'GET /platform/v1/usage?month=YYYY-MM streams every project as JSON lines or CSV.',
  fieldFlags: { month: '--month' },
  async run(context, args) {
    const month = stringOption(args, 'month', false)
    const controlPlane = await context.controlPlane()
    const ref = args.positionals[0]
    if (ref !== undefined) return projectUsage(controlPlane, ref, month)
    const exported = await openUsageExport(controlPlane, month)
    const projects: UsageExportRow[] = []
    for await (const batch of exported.batches) projects.push(...batch)
    return { month: exported.month, projects }
  },
  human: (result: ProjectUsageView | { month: string; projects: UsageExportRow[] }) =>
    'projects' in result ? allHuman(result) : projectHuman(result),
}
