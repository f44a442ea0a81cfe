// The actor host on its own thread, as the platform runs it: it claims the
// project's actor, sends, reports its claims to the parent, is started again
// when the thread dies, and stops on request.
import t from 'tap'
import { startPushActorThread } from '../../workers/push/actor-thread.ts'
import { eventually, newUserId, pushFixture, service, user } from './helpers.ts'
import { makeApnsKey } from '../../dev/push-peers/keys.ts'
import { startApnsPeer } from '../../dev/push-peers/apns-peer.ts'

const TOPIC = 'com.example.thread'

t.test('the actor thread sends, comes back after a crash, and stops', async (t) => {
  const key = makeApnsKey()
  const peer = await startApnsPeer({ teamId: key.teamId, keyId: key.keyId, publicKey: key.publicKey, topic: TOPIC })
  t.teardown(() => peer.close())
  const fx = await pushFixture(t, { plan: 'pro' })
  t.equal((await fx.call(service, 'PUT', '/credentials/apns', { topic: TOPIC, key_id: key.keyId, team_id: key.teamId, keys: [{ p8: key.p8 }] })).status, 200)
  const owner = newUserId()
  const registered = await fx.call(user(owner), 'POST', '/devices', { platform: 'apns', token: 'a'.repeat(64) })
  t.equal(registered.status, 201)

  const thread = await startPushActorThread({ catalogueUrl: fx.catalogueUrl, defaultServerUrl: fx.server, endpoints: { apnsUrl: peer.url }, claimRetryMs: 200 })
  let stopped = false
  t.teardown(() => (stopped ? undefined : thread.stop()))
  await eventually(() => thread.claimed().includes(fx.project.ref), 10000, 'the thread reports its claim')

  const send = async (title: string) => {
    t.equal((await fx.call(service, 'POST', '/messages', { user_id: owner, title })).status, 201)
    await eventually(() => peer.delivered.some((d) => (d.payload.aps as { alert?: { title?: string } }).alert?.title === title), 10000, `"${title}" delivered`)
  }
  await send('from the thread')

  // A crash: the claims go with the thread, and a new thread takes the project again.
  await thread.terminate()
  t.same(thread.claimed(), [], 'no claims while the thread is down')
  await eventually(() => thread.claimed().includes(fx.project.ref), 15000, 'claimed again by the new thread')
  await send('after the restart')

  await thread.stop()
  stopped = true
  t.same(thread.claimed(), [], 'no claims once stopped')
  // Its last word is its tally (the node's usage counts the last batches' deliveries): what the new thread
  // delivered (a batch the crash cut short is sent again by it, hence the peer's count less the first).
  t.same(thread.lastSnapshot()?.pushDeliveries, [{ labels: [fx.project.ref, 'apns', 'sent'], count: peer.delivered.length - 1 }], 'the tally it sent as it ended')
  // The lock went with the thread's connections: an in-process host can take the project now.
  const host = await fx.startHost()
  await eventually(() => host.claimed().includes(fx.project.ref), 10000, 'the project is free to claim')
})
