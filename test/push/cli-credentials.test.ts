// The functions the CLI calls for `baseplane push credentials set`.
import t from 'tap'
import type { CredentialStatus } from '../../workers/push/credentials.ts'
import { BaseplaneError } from '../../lib/errors.ts'
import { setApnsCredentials, setFcmCredentials } from '../../workers/push/credentials.ts'
import { runCli } from '../helpers/cli.ts'
import { pushFixture, service } from './helpers.ts'
import { makeApnsKey, makeServiceAccount } from '../../dev/push-peers/keys.ts'
import { startFcmPeer } from '../../dev/push-peers/fcm-peer.ts'
import { createProject } from '../../control-plane/projects.ts'

t.test('push credentials set: apns and fcm, checked, stored, shown only by what identifies them', async (t) => {
  const peer = await startFcmPeer()
  t.teardown(() => peer.close())
  const fx = await pushFixture(t)
  const key = makeApnsKey()
  const apns = await setApnsCredentials(fx.project, fx.server, { topic: 'com.example.cli', key_id: key.keyId, team_id: key.teamId, keys: [{ p8: key.p8 }] })
  t.match(apns, { platform: 'apns', topic: 'com.example.cli', key_id: key.keyId, team_id: key.teamId, environment: 'production' })
  const err = await setApnsCredentials(fx.project, fx.server, { topic: 'com.example.cli', key_id: key.keyId, team_id: key.teamId, keys: [{ p8: 'x' }] }).catch((e) => e)
  t.ok(BaseplaneError.is(err))
  t.equal(err.code, 'invalid_apns_key')

  const account = makeServiceAccount()
  peer.allow(account.file.client_email, account.file.project_id, account.publicKey)
  const fcm = await setFcmCredentials(fx.project, fx.server, JSON.stringify(account.file), { fcmTokenUrl: peer.tokenUrl })
  t.match(fcm, { platform: 'fcm', project_id: account.file.project_id, client_email: account.file.client_email })
  const refused = await setFcmCredentials(fx.project, fx.server, makeServiceAccount().file, { fcmTokenUrl: peer.tokenUrl }).catch((e) => e)
  t.equal(refused.code, 'service_account_refused')
  t.equal((await setFcmCredentials(fx.project, fx.server, '{not json', { fcmTokenUrl: peer.tokenUrl }).catch((e) => e)).code, 'invalid_service_account')

  const listed = await fx.call<CredentialStatus>(service, 'GET', '/credentials')
  t.equal(listed.json.apns!.topic, 'com.example.cli')
  t.equal(listed.json.fcm!.client_email, account.file.client_email)

  const noPush = await createProject(fx.controlPlane, { name: 'no push' })
  const notInstalled = await setApnsCredentials(noPush, fx.server, { topic: 'com.example.cli', key_id: key.keyId, team_id: key.teamId, keys: [{ p8: key.p8 }] }).catch((e) => e)
  t.equal(notInstalled.code, 'push_not_installed')
})

t.test('the baseplane CLI: push credentials set REF apns|fcm', async (t) => {
  const fs = await import('node:fs')
  const os = await import('node:os')
  const path = await import('node:path')
  const peer = await startFcmPeer()
  t.teardown(() => peer.close())
  const fx = await pushFixture(t)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-push-cli-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const key = makeApnsKey()
  fs.writeFileSync(path.join(dir, 'key.p8'), key.p8)
  fs.writeFileSync(path.join(dir, 'bad.p8'), 'not a key')
  const account = makeServiceAccount()
  peer.allow(account.file.client_email, account.file.project_id, account.publicKey)
  fs.writeFileSync(path.join(dir, 'sa.json'), JSON.stringify(account.file))
  const cli = (args: string[]) => runCli(args, { DATABASE_URL: fx.controlPlane.defaultServerUrl, BASEPLANE_FCM_TOKEN_URL: peer.tokenUrl })
  const ref = fx.project.ref
  const apns = await cli(['push', 'credentials', 'set', ref, 'apns', '--topic', 'com.example.cli2', '--key-id', key.keyId, '--team-id', key.teamId, '--file', path.join(dir, 'key.p8')])
  t.equal(apns.code, 0, apns.stderr)
  t.match(apns.stdout, new RegExp(`^Stored APNs credentials: topic com\\.example\\.cli2, key_id ${key.keyId}, team_id ${key.teamId}, environment production, key_ids ${key.keyId}, updated_at \\S+\\n$`))
  const fcm = await cli(['push', 'credentials', 'set', ref, 'fcm', '--file', path.join(dir, 'sa.json'), '--json'])
  t.equal(fcm.code, 0, fcm.stderr)
  t.match(JSON.parse(fcm.stdout), { platform: 'fcm', project_id: account.file.project_id, client_email: account.file.client_email })
  t.notMatch(fcm.stdout, 'PRIVATE KEY', 'the key is never printed')
  const listed = await fx.call<CredentialStatus>(service, 'GET', '/credentials')
  t.equal(listed.json.apns!.topic, 'com.example.cli2')

  const refusals: Array<[string[], number, RegExp]> = [
    [['push', 'credentials', 'set', ref, 'hms', '--file', 'x'], 1, /^baseplane: unknown provider "hms": use apns or fcm\n$/],
    [['push', 'credentials', 'set', ref, 'apns', '--topic', 'com.example.cli2', '--key-id', key.keyId, '--team-id', key.teamId, '--file', path.join(dir, 'missing.p8')], 1, /^baseplane: cannot read --file .*missing\.p8: ENOENT\n$/],
    [['push', 'credentials', 'set', ref, 'apns', '--topic', 'com.example.cli2', '--key-id', key.keyId, '--team-id', key.teamId, '--file', path.join(dir, 'bad.p8')], 1, /^baseplane: .+\n$/],
    [['push', 'credentials', 'set', ref, 'apns', '--file', path.join(dir, 'key.p8')], 2, /^baseplane: missing --topic\n$/],
    [['push', 'credentials', 'set', ref, 'fcm', '--topic', 'x', '--file', path.join(dir, 'sa.json')], 2, /^baseplane: --topic is for apns, not fcm\n$/],
    [['push', 'credentials', 'set', 'nosuchproject', 'fcm', '--file', path.join(dir, 'sa.json')], 1, /^baseplane: Project "nosuchproject" not found\n$/],
  ]
  for (const [args, code, stderr] of refusals) {
    const run = await cli(args)
    t.equal(run.code, code, args.join(' '))
    t.match(run.stderr, stderr)
  }
})
