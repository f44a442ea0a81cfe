// Provider endpoints behind a private certificate authority (a proxy or a
// stand-in that re-signs TLS): Node trusts the CA named by NODE_EXTRA_CA_CERTS
// for every TLS connection of the process, worker threads included, so the
// credential check and the actor thread's HTTP/2 sessions both work with it,
// and both refuse the certificate without it. Nothing of Baseplane's turns
// certificate checks off.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import readline from 'node:readline'
import t, { type Test } from 'tap'
import { eventually, newUserId, pushFixture, service, user } from './helpers.ts'
import { makeServiceAccount } from '../../dev/push-peers/keys.ts'
import { startFcmPeer } from '../../dev/push-peers/fcm-peer.ts'

const CA_DIR = path.join(import.meta.dirname, 'peers', 'private-ca')
const tls = { key: fs.readFileSync(path.join(CA_DIR, 'server-key.pem'), 'utf8'), cert: fs.readFileSync(path.join(CA_DIR, 'server.pem'), 'utf8') }

/** Starts the platform-side process; resolves with its lines as they come. */
function platformProcess(t: Test, env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/push/peers/private-ca-process.ts'], {
    env: { ...process.env, BASEPLANE_LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGTERM')
  })
  const lines = readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  return {
    next: async () => (await lines.next()).value as string,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}

t.test('with NODE_EXTRA_CA_CERTS the check and the sending trust a private CA; without it both refuse the certificate', async (t) => {
  const peer = await startFcmPeer({ tls })
  t.teardown(() => peer.close())
  t.match(peer.url, /^https:/)
  const fx = await pushFixture(t)
  const account = makeServiceAccount()
  peer.allow(account.file.client_email, account.file.project_id, account.publicKey)
  const env = {
    CATALOGUE_URL: fx.catalogueUrl,
    SERVER_URL: fx.server,
    REF: fx.project.ref,
    FCM_URL: peer.url,
    FCM_TOKEN_URL: peer.tokenUrl,
    SERVICE_ACCOUNT: JSON.stringify(account.file),
  }

  const untrusting = platformProcess(t, { ...env, NODE_EXTRA_CA_CERTS: '' })
  const refused = JSON.parse(await untrusting.next())
  t.equal(refused.code, 'token_endpoint_unreachable')
  t.match(refused.message, /certificate/, `the certificate is refused: ${refused.message}`)
  t.equal((await fx.admin('select count(*)::int as n from push.credentials')).rows[0].n, 0, 'nothing stored')

  const trusting = platformProcess(t, { ...env, NODE_EXTRA_CA_CERTS: path.join(CA_DIR, 'ca.pem') })
  t.same(JSON.parse(await trusting.next()), { stored: account.file.project_id }, 'the service account obtained a token over https')
  t.equal(await trusting.next(), 'ready')
  const alice = newUserId()
  t.equal((await fx.call(user(alice), 'POST', '/devices', { platform: 'fcm', token: 'behind-the-proxy' })).status, 201)
  t.equal((await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'through TLS' })).status, 201)
  await eventually(() => peer.delivered.length === 1, 15000, 'delivered over HTTP/2 + TLS by the actor thread')
  t.match(peer.delivered[0]!.message, { token: 'behind-the-proxy', notification: { title: 'through TLS' } })
  t.same((await fx.admin(`select status from push.delivery_log`)).rows, [{ status: 'sent' }])
  await trusting.stop()

  // The same keys, sent by a process that does not trust the CA: its first TLS handshake (for the access token) fails, and the delivery waits to be retried.
  const sender = platformProcess(t, { ...env, NODE_EXTRA_CA_CERTS: '', ACTOR_ONLY: '1' })
  t.equal(await sender.next(), '{}')
  t.equal(await sender.next(), 'ready')
  t.equal((await fx.call(service, 'POST', '/messages', { user_id: alice, title: 'not trusted' })).status, 201)
  const retry = await eventually(async () => (await fx.admin(`select status, reason from push.delivery_log where status <> 'sent'`)).rows[0], 15000, 'a refused handshake')
  t.equal(retry.status, 'retry')
  t.match(retry.reason, /^FCM: token endpoint unreachable \(.*unable to verify the first certificate\)$/)
  t.equal(peer.delivered.length, 1, 'nothing delivered without trust')
})
