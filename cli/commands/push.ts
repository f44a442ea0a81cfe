// `baseplane push ...`: provider keys (set, show, remove), devices, the
// delivery log and a test notification, through the operations the dashboard's
// Push page and the admin API use (control-plane/push-admin.ts); keys are
// checked as PUT {base_url}/push/v1/credentials/apns|fcm checks them.
import fs from 'node:fs'
import {
  LOG_STATUSES,
  listPushDevices,
  PLATFORMS,
  pushDeliveryLog,
  removePushCredentials,
  sendTestNotification,
  setPushCredentials,
  showPushCredentials,
  type DevicePage,
  type LogPage,
  type PushCredentialsView,
} from '../../control-plane/push-admin.ts'
import { integerOption, refusedValue, stringOption, table, UsageError, type Command, type ParsedArgs } from '../command.ts'
import { isUuid } from '../../lib/uuid.ts'

function readFile(path: string): string {
  try {
    return fs.readFileSync(path, 'utf8')
  } catch (error) {
    throw refusedValue(`cannot read --file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
  }
}

export const pushCommands: Command[] = [
  {
    words: ['push', 'credentials', 'set'],
    positionals: ['REF', 'PROVIDER'],
    usage: 'push credentials set REF apns --topic BUNDLE_ID --key-id KEY_ID --team-id TEAM_ID --file key.p8 [--environment production|sandbox] | fcm --file service-account.json',
    summary: "Check and store a project's APNs signing key or FCM service account (never shown again)",
    options: {
      topic: { type: 'string' },
      'key-id': { type: 'string' },
      'team-id': { type: 'string' },
      file: { type: 'string' },
      environment: { type: 'string' },
    },
    optionHelp: {
      topic: "apns: the app's bundle id, the topic every notification goes to",
      'key-id': 'apns: the 10-character id of the .p8 signing key (Apple Developer > Keys)',
      'team-id': 'apns: the 10-character id of the Apple developer team',
      file: 'apns: the .p8 signing key; fcm: the service account JSON file (Firebase > Project settings > Service accounts)',
      environment: 'apns: production (default) or sandbox, the APNs host development builds use',
    },
    optionValues: { topic: 'BUNDLE_ID', 'key-id': 'KEY_ID', 'team-id': 'TEAM_ID', file: 'FILE', environment: 'production|sandbox' },
    async run(context, args) {
      const [ref, provider] = args.positionals as [string, string]
      if (provider !== 'apns' && provider !== 'fcm') throw refusedValue(`unknown provider "${provider}": use apns or fcm`)
      const file = readFile(stringOption(args, 'file', true))
      if (provider === 'fcm') {
        for (const flag of ['topic', 'key-id', 'team-id', 'environment']) {
          if (args.values[flag] !== undefined) throw new UsageError(`--${flag} is for apns, not fcm`)
        }
        return setPushCredentials(await context.controlPlane(), ref, 'fcm', file, { fcmTokenUrl: context.config.push.fcmTokenUrl })
      }
      const environment = stringOption(args, 'environment', false)
      const input = {
        topic: stringOption(args, 'topic', true),
        key_id: stringOption(args, 'key-id', true),
        team_id: stringOption(args, 'team-id', true),
        keys: [{ p8: file }],
        ...(environment ? { environment } : {}),
      }
      return setPushCredentials(await context.controlPlane(), ref, 'apns', input)
    },
    human: (result: Record<string, unknown>) =>
      `Stored ${result.platform === 'apns' ? 'APNs' : 'FCM'} credentials: ` +
      Object.entries(result)
        .filter(([key]) => key !== 'platform')
        .map(([key, value]) => `${key} ${String(value)}`)
        .join(', '),
  },
  {
    words: ['push', 'credentials', 'show'],
    positionals: ['REF'],
    usage: 'push credentials show REF',
    summary: "What identifies a project's stored APNs and FCM keys (never the keys), and whether sending is stopped",
    async run(context, args) {
      return showPushCredentials(await context.controlPlane(), args.positionals[0]!)
    },
    human: (view: PushCredentialsView) => {
      const stopped = (entry: { stopped_reason: string | null; stopped_at: string | null; what_to_do: string | null }) =>
        entry.stopped_reason ? `\n  stopped      ${entry.stopped_reason} (since ${entry.stopped_at})\n  what to do   ${entry.what_to_do}` : '\n  sending      yes'
      const apns = view.apns
        ? `APNs (Apple)\n  bundle id    ${view.apns.topic}\n  key id       ${view.apns.key_id}\n  team id      ${view.apns.team_id}\n  environment  ${view.apns.environment}\n  created      ${view.apns.created_at}\n  updated      ${view.apns.updated_at}${stopped(view.apns)}`
        : `APNs (Apple)\n  not set      baseplane push credentials set ${view.ref} apns --topic BUNDLE_ID --key-id KEY_ID --team-id TEAM_ID --file AuthKey.p8`
      const fcm = view.fcm
        ? `FCM (Android)\n  project id   ${view.fcm.project_id}\n  account      ${view.fcm.client_email}\n  key id       ${view.fcm.private_key_id ?? '-'}\n  created      ${view.fcm.created_at}\n  updated      ${view.fcm.updated_at}${stopped(view.fcm)}`
        : `FCM (Android)\n  not set      baseplane push credentials set ${view.ref} fcm --file service-account.json`
      return `${apns}\n${fcm}\nWeb Push\n  ready        VAPID public key ${view.web.public_key}`
    },
  },
  {
    words: ['push', 'credentials', 'remove'],
    positionals: ['REF', 'PROVIDER'],
    usage: 'push credentials remove REF apns|fcm',
    summary: "Remove a project's stored APNs or FCM keys (sending through that provider stops)",
    async run(context, args) {
      const [ref, provider] = args.positionals as [string, string]
      if (provider !== 'apns' && provider !== 'fcm') throw refusedValue(`unknown provider "${provider}": use apns or fcm`)
      return removePushCredentials(await context.controlPlane(), ref, provider)
    },
    human: (result: { ref: string; removed: string }) =>
      `Removed the ${result.removed === 'apns' ? 'APNs' : 'FCM'} keys of project ${result.ref}; nothing is sent through ${result.removed === 'apns' ? 'APNs' : 'FCM'} until new keys are set.`,
  },
  {
    words: ['push', 'devices'],
    positionals: ['REF'],
    usage: 'push devices REF [--platform apns|fcm|web] [--user ID] [--active true|false] [--limit N] [--offset N]',
    summary: "List a project's push devices, newest first: platform, user, active, deactivation reason",
    options: { platform: { type: 'string' }, user: { type: 'string' }, active: { type: 'string' }, limit: { type: 'string' }, offset: { type: 'string' } },
    optionHelp: {
      platform: 'only devices of this platform: apns, fcm or web',
      user: "only this user's devices (a user id)",
      active: 'true: only active devices; false: only deactivated ones',
      limit: 'devices a page, 1 to 500 (default 50)',
      offset: 'devices to skip (the "More" line of the previous page gives it)',
    },
    async run(context, args) {
      const active = choice(args, 'active', ['true', 'false'])
      return listPushDevices(await context.controlPlane(), args.positionals[0]!, {
        platform: choice(args, 'platform', PLATFORMS),
        user: userOption(args),
        active: active === undefined ? undefined : active === 'true',
        limit: integerOption(args, 'limit', { min: 1, max: 500 }),
        offset: integerOption(args, 'offset', { min: 0, max: 1_000_000 }),
      })
    },
    human: (page: DevicePage) =>
      page.devices.length === 0
        ? 'No devices.'
        : table([
            ['ID', 'PLATFORM', 'USER', 'ACTIVE', 'DEACTIVATED', 'REGISTERED'],
            ...page.devices.map((d) => [d.id, d.platform, d.user_id ?? '-', d.active ? 'yes' : 'no', d.deactivated_reason ?? '', d.created_at]),
          ]) + (page.next_offset === null ? '' : `\nMore: --offset ${page.next_offset}`),
  },
  {
    words: ['push', 'log'],
    positionals: ['REF'],
    usage: 'push log REF [--status sent|failed|retry|held|expired] [--provider apns|fcm|web] [--user ID] [--message ID] [--limit N] [--before ID]',
    summary: "A project's push delivery log, newest first: status, provider reason, attempt, time, and the message (id and title)",
    options: { status: { type: 'string' }, provider: { type: 'string' }, user: { type: 'string' }, message: { type: 'string' }, limit: { type: 'string' }, before: { type: 'string' } },
    optionHelp: {
      status: 'only attempts with this outcome: sent, failed, retry, held (provider stopped) or expired',
      provider: 'only attempts through apns, fcm or web',
      user: "only attempts to this user's devices (a user id)",
      message: 'only the attempts of this message (the id a send or push test answers)',
      limit: 'entries a page, 1 to 500 (default 50)',
      before: 'entries older than this id (the "Older" line of the previous page gives it)',
    },
    async run(context, args) {
      return pushDeliveryLog(await context.controlPlane(), args.positionals[0]!, {
        status: choice(args, 'status', LOG_STATUSES),
        provider: choice(args, 'provider', PLATFORMS),
        user: userOption(args),
        message: stringOption(args, 'message', false),
        limit: integerOption(args, 'limit', { min: 1, max: 500 }),
        before: integerOption(args, 'before', { min: 1, max: Number.MAX_SAFE_INTEGER }),
      })
    },
    human: (page: LogPage) =>
      page.entries.length === 0
        ? 'No deliveries.'
        : table([
            ['TIME', 'STATUS', 'PROVIDER', 'ATTEMPT', 'MESSAGE', 'TITLE', 'REASON', 'DEVICE', 'USER'],
            ...page.entries.map((e) => [e.attempted_at, e.status, e.provider, String(e.attempt), e.message_id, e.title ?? '-', e.reason ?? '', e.device_id, e.user_id ?? '-']),
          ]) + (page.next_before === null ? '' : `\nOlder: --before ${page.next_before}`),
  },
  {
    words: ['push', 'test'],
    positionals: ['REF', 'DEVICE_ID'],
    usage: 'push test REF DEVICE_ID [--title TEXT] [--body TEXT]',
    summary: 'Send a test notification to one device (the outcome shows in push log)',
    options: { title: { type: 'string' }, body: { type: 'string' } },
    optionHelp: { title: 'the title (default "Test notification")', body: 'the body (default: a sentence naming the project)' },
    async run(context, args) {
      const [ref, device] = args.positionals as [string, string]
      return sendTestNotification(await context.controlPlane(), ref, device, { title: stringOption(args, 'title', false), body: stringOption(args, 'body', false) })
    },
    human: (result: { id: string; device_id: string; ref: string }) =>
      `Queued test notification ${result.id} to device ${result.device_id}; its outcome: baseplane push log ${result.ref} --message ${result.id}`,
  },
]

/** An option that takes one of `allowed`; a value outside them is refused naming the flag. */
function choice(args: ParsedArgs, name: string, allowed: readonly string[]): string | undefined {
  const value = stringOption(args, name, false)
  if (value !== undefined && !allowed.includes(value)) throw refusedValue(`--${name} must be one of ${allowed.join(', ')}, got "${value}"`)
  return value
}

function userOption(args: ParsedArgs): string | undefined {
  const value = stringOption(args, 'user', false)
  if (value !== undefined && !isUuid(value)) throw refusedValue(`--user must be a user id (a UUID), got "${value}"`)
  return value
}
