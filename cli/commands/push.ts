// `baseplane push credentials set REF apns|fcm ...`: the same checks and
// storage as PUT {base_url}/push/v1/credentials/apns|fcm (workers/push/credentials.ts).
import fs from 'node:fs'
import { setApnsCredentials, setFcmCredentials } from '../../workers/push/credentials.ts'
import { stringOption, UsageError, type Command } from '../command.ts'

function readFile(path: string): string {
  try {
    return fs.readFileSync(path, 'utf8')
  } catch (error) {
    throw new UsageError(`cannot read --file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
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
    async run(context, args) {
      const [ref, provider] = args.positionals as [string, string]
      if (provider !== 'apns' && provider !== 'fcm') throw new UsageError(`unknown provider "${provider}": use apns or fcm`)
      const file = readFile(stringOption(args, 'file', true))
      const controlPlane = await context.controlPlane()
      const project = await controlPlane.get(ref)
      const serverUrl = await controlPlane.serverUrl(project.dbServer)
      if (provider === 'fcm') {
        for (const flag of ['topic', 'key-id', 'team-id', 'environment']) {
          if (args.values[flag] !== undefined) throw new UsageError(`--${flag} is for apns, not fcm`)
        }
        return setFcmCredentials(project, serverUrl, file, { fcmTokenUrl: context.config.push.fcmTokenUrl })
      }
      const environment = stringOption(args, 'environment', false)
      return setApnsCredentials(project, serverUrl, {
        topic: stringOption(args, 'topic', true),
        key_id: stringOption(args, 'key-id', true),
        team_id: stringOption(args, 'team-id', true),
        keys: [{ p8: file }],
        ...(environment ? { environment } : {}),
      })
    },
    human: (result: Record<string, unknown>) =>
      `Stored ${result.platform === 'apns' ? 'APNs' : 'FCM'} credentials: ` +
      Object.entries(result)
        .filter(([key]) => key !== 'platform')
        .map(([key, value]) => `${key} ${String(value)}`)
        .join(', '),
  },
]
