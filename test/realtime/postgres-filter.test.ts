// A postgres_changes binding's filter as realtime-js's builder writes it:
// parsed (quoting, `in` lists, `not.`, comma-AND, refusals) and matched
// against records with SQL's NULL logic.
import t from 'tap'
import { postgresChangesFilter } from '@supabase/realtime-js'
import { FilterError, matches, parseFilter } from '../../workers/realtime/postgres-filter.ts'

t.test('what the builder writes parses back', async (t) => {
  const built = postgresChangesFilter().in('title', ['a', 'b,c', 'say "hi"']).not('n', 'is', null).gte('n', 2).build()
  t.same(parseFilter(built), [
    { column: 'title', operator: 'in', negated: false, values: ['a', 'b,c', 'say "hi"'] },
    { column: 'n', operator: 'is', negated: true, values: ['null'] },
    { column: 'n', operator: 'gte', negated: false, values: ['2'] },
  ])
  t.same(parseFilter(undefined), [])
  t.same(parseFilter(''), [])
})

t.test('refusals', async (t) => {
  for (const bad of ['n=eqq.1', 'n', '=eq.1', 'n=eq', 'n=in.1', 'n=in.()', 'title=eq."open']) t.throws(() => parseFilter(bad), FilterError, bad)
  t.throws(() => parseFilter('n=eqq.1'), { message: /^Error parsing `filter` params: unknown operator "eqq"/ })
})

t.test('matching', async (t) => {
  const row = { id: 5, title: 'Apple pie', done: true, note: null, tags: { a: 1 } }
  const cases: [string, boolean][] = [
    ['id=eq.5', true],
    ['id=gt.10', false],
    ['id=lte.5,title=like.Apple%', true],
    ['title=ilike.apple*', true],
    ['title=like.apple%', false],
    ['title=match.^Ap+le', true],
    ['title=imatch.PIE$', true],
    ['done=is.true', true],
    ['done=eq.t', true],
    ['note=is.null', true],
    ['note=eq.x', false],
    ['note=not.eq.x', false],
    ['note=isdistinct.x', true],
    ['id=isdistinct.5', false],
    ['id=in.(1,5,9)', true],
    ['id=not.in.(1,5,9)', false],
    ['missing=is.null', false],
  ]
  for (const [filter, expected] of cases) t.equal(matches(parseFilter(filter), row), expected, filter)
})
