// The `baseplane push` commands an operator reads and acts with: credentials
// show and remove, devices, a test notification, the delivery log (the
// operations behind them: push-admin.test.ts).
import t from 'tap'
import { sendTestNotification, setPushCredentials } from '../../control-plane/push-admin.ts'
import { runCli } from '../helpers/cli.ts'
import { eventually, newUserId, pushFixture, user } from './helpers.ts'
import { makeApnsKey } from '../../dev/push-peers/keys.ts'
import { startApnsPeer } from '../../dev/push-peers/apns-peer.ts'

t.test('the baseplane CLI: push credentials show|remove, push devices, push test, push log', async (t) => {
  const key = makeApnsKey()
  const peer = await startApnsPeer({ teamId: key.teamId, keyId: key.keyId, publicKey: key.publicKey, topic: 'com.example.log' })
  t.teardown(() => peer.close())
  const fx = await pushFixture(t, { endpoints: { apnsUrl: peer.url } })
  // Each command is a process of its own: the operations behind them are tested in push-admin.test.ts,
  // so this runs few, for what the CLI adds (flags, printing, exit codes).
  const cli = (args: string[]) => runCli(args, { DATABASE_URL: fx.controlPlane.defaultServerUrl })
  const ref = fx.project.ref
  await setPushCredentials(fx.controlPlane, ref, 'apns', { topic: 'com.example.log', key_id: key.keyId, team_id: key.teamId, keys: [{ p8: key.p8 }] })
  await fx.startHost()
  const alice = newUserId()
  const ok = (await fx.call(user(alice), 'POST', '/devices', { platform: 'apns', token: 'ab'.repeat(32) })).json.id
  const dead = (await fx.call(user(alice), 'POST', '/devices', { platform: 'apns', token: `dead${'0'.repeat(60)}` })).json.id

  const shown = await cli(['push', 'credentials', 'show', ref])
  t.equal(shown.code, 0, shown.stderr)
  t.match(shown.stdout, new RegExp(`^APNs \\(Apple\\)\\n  bundle id    com\\.example\\.log\\n  key id       ${key.keyId}\\n  team id      ${key.teamId}\\n  environment  production\\n  created      \\S+\\n  updated      \\S+\\n  sending      yes\\n`))
  t.match(shown.stdout, `FCM (Android)\n  not set      baseplane push credentials set ${ref} fcm --file service-account.json\n`)
  t.match(shown.stdout, /Web Push\n  ready        VAPID public key [A-Za-z0-9_-]+\n$/)
  t.notMatch(shown.stdout, 'PRIVATE KEY')

  const sent = await cli(['push', 'test', ref, ok, '--title', 'From the CLI'])
  t.equal(sent.code, 0, sent.stderr)
  const sentId = new RegExp(`^Queued test notification (\\S+) to device ${ok}; its outcome: baseplane push log ${ref} --message (\\S+)\\n$`).exec(sent.stdout)
  t.ok(sentId && sentId[1] === sentId[2], sent.stdout)
  await sendTestNotification(fx.controlPlane, ref, dead)
  await eventually(async () => (await fx.admin(`select count(*)::int as n from push.delivery_log`)).rows[0].n === 2, 15000, 'two attempts logged')
  t.match(peer.delivered[0]!.payload, { aps: { alert: { title: 'From the CLI' } } })
  // The id push test printed finds its attempt, with the title.
  const ofMessage = await cli(['push', 'log', ref, '--message', sentId![1]!])
  t.equal(ofMessage.code, 0, ofMessage.stderr)
  t.match(ofMessage.stdout, new RegExp(`^TIME +STATUS +PROVIDER +ATTEMPT +MESSAGE +TITLE +REASON +DEVICE +USER\\n\\S+ +sent +apns +1 +${sentId![1]} +From the CLI +${ok} +${alice}\\n$`))

  const devices = await cli(['push', 'devices', ref, '--user', alice])
  t.equal(devices.code, 0, devices.stderr)
  t.match(devices.stdout, /^ID +PLATFORM +USER +ACTIVE +DEACTIVATED +REGISTERED\n/)
  t.match(devices.stdout, new RegExp(`${ok} +apns +${alice} +yes`))
  t.match(devices.stdout, new RegExp(`${dead} +apns +${alice} +no +APNs: Unregistered`))
  const failed = await cli(['push', 'log', ref, '--status', 'failed', '--provider', 'apns', '--user', alice, '--limit', '5'])
  t.equal(failed.code, 0, failed.stderr)
  t.match(failed.stdout, new RegExp(`^TIME +STATUS +PROVIDER +ATTEMPT +MESSAGE +TITLE +REASON +DEVICE +USER\\n\\S+ +failed +apns +1 +\\S+ +Test notification +APNs: Unregistered +${dead} +${alice}\\n$`))
  const paged = await cli(['push', 'log', ref, '--limit', '1'])
  t.equal(paged.code, 0, paged.stderr)
  t.match(paged.stdout, /\nOlder: --before \d+\n$/, 'a full page says how to get the next one')

  const removed = await cli(['push', 'credentials', 'remove', ref, 'apns'])
  t.equal(removed.code, 0, removed.stderr)
  t.equal(removed.stdout, `Removed the APNs keys of project ${ref}; nothing is sent through APNs until new keys are set.\n`)

  const refusals: Array<[string[], number, RegExp]> = [
    [['push', 'credentials', 'remove', ref, 'apns'], 1, /^baseplane: No apns credentials are set\n$/],
    [['push', 'log', ref, '--status', 'lost', '--user', alice], 1, /^baseplane: --status must be one of sent, failed, retry, held, expired, got "lost"\n$/],
    [['push', 'devices', ref, '--user', 'alice'], 1, /^baseplane: --user must be a user id \(a UUID\), got "alice"\n$/],
    [['push', 'test', ref, dead], 1, /^baseplane: Device \S+ is deactivated \(APNs: Unregistered\)\n$/],
    [['push', 'test', ref, 'not-a-uuid'], 1, /^baseplane: "not-a-uuid" is not a device id \(a UUID\)\n$/],
    [['push', 'test', ref, '00000000-0000-4000-8000-000000000000'], 1, new RegExp(`^baseplane: Project ${ref} has no device 00000000-0000-4000-8000-000000000000\n$`)],
    [['push', 'log', ref, '--message', 'latest'], 1, /^baseplane: message must be a message id \(a UUID\), got "latest"\n$/],
  ]
  for (const [args, code, stderr] of refusals) {
    const run = await cli(args)
    t.equal(run.code, code, args.join(' '))
    t.match(run.stderr, stderr)
  }
})
