// The fair-share scheduler on its own: which requests start, which wait,
// which are refused, and in what order slots are handed out. Work items are
// promises the test settles by hand, so every step is deterministic.
import t from 'tap'
import { BaseplaneError } from '../../lib/errors.ts'
import { FairShare, RETRY_AFTER_SECONDS } from '../../data-plane/fair-share.ts'

interface Gate {
  started: string[]
  open(label: string): void
  work(label: string): (shard: number) => Promise<string>
}

/** Work items that record when they start and finish when the test opens them. */
function gate(): Gate {
  const started: string[] = []
  const openers = new Map<string, () => void>()
  return {
    started,
    open(label) {
      const open = openers.get(label)
      if (!open) throw new Error(`${label} has not started`)
      open()
    },
    work(label) {
      return () => {
        started.push(label)
        return new Promise<string>((resolve) => openers.set(label, () => resolve(label)))
      }
    },
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve))

t.test('a project runs up to its limit, queues up to its queue, and is refused beyond', async (t) => {
  const share = new FairShare({ shards: 1, slotsPerShard: 8, stickyMillis: 1000 })
  t.teardown(() => share.close())
  const limits = { concurrentRequests: 2, queuedRequests: 2 }
  const g = gate()
  const results = ['a1', 'a2', 'a3', 'a4'].map((label) => share.run('a', limits, g.work(label)))
  await tick()
  t.same(g.started, ['a1', 'a2'], 'two run, two wait')
  const refused = await share.run('a', limits, g.work('a5')).then(
    () => undefined,
    (error: unknown) => error,
  )
  t.ok(BaseplaneError.is(refused), 'the fifth is refused')
  t.same((refused as BaseplaneError).toData(), {
    code: 'service_unavailable',
    message: 'Too many requests for this project are waiting; try again shortly',
    status: 503,
    hint: 'Each project may run a few requests at once per service (more on larger plans); spread requests out or retry after the Retry-After seconds.',
    retryAfter: RETRY_AFTER_SECONDS,
  })
  g.open('a1')
  await tick()
  t.same(g.started, ['a1', 'a2', 'a3'], 'a finished request lets the next waiting one start')
  g.open('a2')
  g.open('a3')
  await tick()
  g.open('a4')
  t.same(await Promise.all(results), ['a1', 'a2', 'a3', 'a4'], 'every admitted request gets its own answer')
  t.same(share.stats(), { busy: [0], projects: [1], waiting: 0 })
})

t.test('a busy project waits behind itself, not in front of its neighbours', async (t) => {
  const share = new FairShare({ shards: 1, slotsPerShard: 4, stickyMillis: 1000 })
  t.teardown(() => share.close())
  const g = gate()
  const busy = { concurrentRequests: 2, queuedRequests: 100 }
  const pending = []
  for (let i = 1; i <= 6; i++) pending.push(share.run('slow', busy, g.work(`s${i}`)))
  await tick()
  t.same(g.started, ['s1', 's2'], 'the slow project holds two of four slots')
  pending.push(share.run('quick', busy, g.work('q1')))
  await tick()
  t.same(g.started, ['s1', 's2', 'q1'], 'a neighbour starts at once although six of the slow project wait')
  g.open('q1')
  g.open('s1')
  g.open('s2')
  await tick()
  t.same(g.started.slice(3), ['s3', 's4'])
  for (const label of ['s3', 's4']) g.open(label)
  await tick()
  for (const label of ['s5', 's6']) g.open(label)
  await Promise.all(pending)
})

t.test('free slots go round-robin between waiting projects', async (t) => {
  const share = new FairShare({ shards: 1, slotsPerShard: 2, stickyMillis: 1000 })
  t.teardown(() => share.close())
  const g = gate()
  const limits = { concurrentRequests: 2, queuedRequests: 10 }
  const pending = [
    share.run('a', limits, g.work('a1')),
    share.run('a', limits, g.work('a2')),
    share.run('a', limits, g.work('a3')),
    share.run('a', limits, g.work('a4')),
    share.run('b', limits, g.work('b1')),
    share.run('b', limits, g.work('b2')),
  ]
  await tick()
  t.same(g.started, ['a1', 'a2'], 'the thread is full')
  g.open('a1')
  await tick()
  g.open('a2')
  await tick()
  t.same(g.started, ['a1', 'a2', 'a3', 'b1'], 'after a3 (a was first in line) the next slot goes to b, not a4')
  g.open('a3')
  await tick()
  t.same(g.started.at(-1), 'a4', 'turns alternate: a, b, a')
  g.open('b1')
  await tick()
  t.same(g.started.at(-1), 'b2', '... then b')
  for (const label of ['a4', 'b2']) g.open(label)
  await Promise.all(pending)
})

t.test('projects are placed on the least busy shard and stay there while active', async (t) => {
  let now = 0
  const share = new FairShare({ shards: 2, slotsPerShard: 4, stickyMillis: 1000, now: () => now })
  t.teardown(() => share.close())
  const limits = { concurrentRequests: 2, queuedRequests: 10 }
  const g = gate()
  const a = share.run('a', limits, g.work('a1'))
  t.equal(share.shardOf('a', limits), 0)
  t.equal(share.shardOf('b', limits), 1, 'b goes to the idle shard')
  t.equal(share.shardOf('c', limits), 1, 'c goes where there are free slots (shard 0 has a busy one)')
  const shards: number[] = []
  const again = share.run('a', limits, (shard) => {
    shards.push(shard)
    return Promise.resolve('a2')
  })
  await again
  t.same(shards, [0], 'a keeps its shard')
  g.open('a1')
  await a
  now = 500
  share.sweep()
  t.same(share.stats().projects, [1, 2], 'recently used projects keep their shards')
  now = 5000
  share.sweep()
  t.same(share.stats().projects, [0, 0], 'idle projects are forgotten after the sticky time')
})

t.test('a work function that throws synchronously frees its slot', async (t) => {
  const share = new FairShare({ shards: 1, slotsPerShard: 1, stickyMillis: 1000 })
  t.teardown(() => share.close())
  const limits = { concurrentRequests: 1, queuedRequests: 1 }
  await t.rejects(
    share.run('a', limits, () => {
      throw new Error('boom')
    }),
    { message: 'boom' },
  )
  t.equal(await share.run('a', limits, async () => 'next'), 'next')
  t.same(share.stats().busy, [0])
})
