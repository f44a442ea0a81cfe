// The parts of Realtime across the fleet that need no server: the presence
// table's entries per node (another node's changes, its whole state, its
// going), the envelope between nodes (a broadcast's bytes kept), the subjects.
import t from 'tap'
import { decodeChannel, decodePresence, encodeChannel, encodePresence } from '../../data-plane/realtime/envelope.ts'
import { channelKey, channelSubject, topicOfKey } from '../../data-plane/realtime/topics.ts'
import { PresenceTable } from '../../workers/realtime/presence.ts'

t.test("the presence table keeps each node's entries apart", async (t) => {
  const here = new PresenceTable('node-a')
  const there = new PresenceTable('node-b')
  const joined = there.track('k', { id: 't1', key: 'bob' }, { status: 'online' })
  here.track('k', { id: 't2', key: 'alice' }, {})
  t.same(here.apply('node-b', 'k', joined), joined, "another node's join is applied and delivered")
  t.equal(here.apply('node-b', 'k', joined), undefined, 'a join heard twice changes nothing')
  t.same(Object.keys(here.state('k')).sort(), ['alice', 'bob'])
  t.same(Object.keys(here.own()), ['k'], 'own() holds this node only')
  t.same(Object.keys(here.own().k!), ['alice'])

  const retracked = there.track('k', { id: 't1', key: 'bob' }, { status: 'away' })
  const applied = here.apply('node-b', 'k', retracked)!
  t.same(applied.joins.bob!.metas[0]!.status, 'away')
  t.same(applied.leaves.bob!.metas[0]!.status, 'online')
  t.equal(here.count('node-b'), 1)

  const replaced = here.replace('node-b', { k: { carol: { metas: [{ phx_ref: 'r9' }] } } })
  t.same(Object.keys(replaced.get('k')!.joins), ['carol'])
  t.same(Object.keys(replaced.get('k')!.leaves), ['bob'])

  const dropped = here.drop('node-b')
  t.same(Object.keys(dropped.get('k')!.leaves), ['carol'], "a node gone: everything it had leaves")
  t.same(Object.keys(here.state('k')), ['alice'])
  t.equal(here.count('node-b'), 0)
})

t.test('a channel message crosses as it was sent, bytes included', async (t) => {
  const json = { joinRef: null, ref: null, topic: 'realtime:room', event: 'broadcast', payload: { type: 'broadcast', event: 'e', payload: { x: 'Zoë' } } }
  t.same(decodeChannel(encodeChannel('n1', json)), { origin: 'n1', message: json })
  const bytes = new Uint8Array([0, 255, 7])
  const binary = { ...json, payload: { type: 'broadcast', event: 'e', payload: bytes } }
  const decoded = decodeChannel(encodeChannel('n1', binary))
  t.same([...(decoded.message.payload as { payload: Uint8Array }).payload], [0, 255, 7])
  t.throws(() => decodeChannel(new Uint8Array([9, 0, 0, 0, 0])), { code: 'bad_envelope' })
  t.same(decodePresence(encodePresence({ k: 'beat', o: 'n1', s: 3 })), { k: 'beat', o: 'n1', s: 3 })
  t.throws(() => decodePresence(new TextEncoder().encode('{"k":"what","o":"n1"}')), { code: 'bad_envelope' })
})

t.test("a channel's subject is NATS-safe whatever its topic", async (t) => {
  const key = channelKey('abcdefghijklmnopqrst', 'realtime:a room.with *dots* > and ✓', false)
  const subject = channelSubject(key)
  t.match(subject, /^rt\.ch\.abcdefghijklmnopqrst\.[A-Za-z0-9_-]+$/)
  t.equal(topicOfKey(key), 'realtime:a room.with *dots* > and ✓')
  t.not(channelSubject(channelKey('abcdefghijklmnopqrst', 'realtime:room', true)), channelSubject(channelKey('abcdefghijklmnopqrst', 'realtime:room', false)))
})
