// Aggregates in `select=` (`count()`, `sum()`, `avg()`, `min()`, `max()`)
// when the operator turns them on (BASEPLANE_REST_AGGREGATES=true, as
// PostgREST's db-aggregates-enabled): the other selected items become the
// groups, embeds included; off by default (PGRST123, refusals.test.ts).
import t from 'tap'
import { restProject } from './helpers.ts'

const f = await restProject(t, `
  create table customers (id int primary key, name text not null);
  create table orders (id int primary key, customer_id int not null references customers(id), amount int not null);
  insert into customers values (1, 'Ann'), (2, 'Ben'), (3, 'Cal');
  insert into orders values (1, 1, 10), (2, 1, 20), (3, 2, 30);
  grant select on customers, orders to anon;
`, undefined, { BASEPLANE_REST_AGGREGATES: 'true' })
const s = f.anon()

t.test('count(), sum(), avg(), min(), max() over the whole table, with casts and aliases', async (t) => {
  const count = await s.from('orders').select('count()')
  t.equal(count.error, null)
  t.same(count.data, [{ count: 3 }])
  const all = await s.from('orders').select('amount.sum(), amount.min(), amount.max(), avg:amount.avg()::int, id.count()')
  t.equal(all.error, null)
  t.same(all.data, [{ sum: 60, min: 10, max: 30, avg: 20, count: 3 }])
  const filtered = await s.from('orders').select('total:amount.sum()').eq('customer_id', 1)
  t.equal(filtered.error, null)
  t.same(filtered.data, [{ total: 30 }])
})

t.test('the other items are the groups', async (t) => {
  const r = await s.from('orders').select('customer_id, total:amount.sum(), count()').order('customer_id')
  t.equal(r.error, null)
  t.same(r.data, [{ customer_id: 1, total: 30, count: 2 }, { customer_id: 2, total: 30, count: 1 }])
  const byEmbed = await s.from('orders').select('amount.sum(), customers(name)')
  t.equal(byEmbed.error, null)
  t.same((byEmbed.data as unknown as Array<{ customers: { name: string } }>).sort((a, b) => a.customers.name.localeCompare(b.customers.name)), [
    { sum: 30, customers: { name: 'Ann' } },
    { sum: 30, customers: { name: 'Ben' } },
  ])
  const bySpread = await s.from('orders').select('amount.sum(), ...customers(name)')
  t.equal(bySpread.error, null)
  t.same((bySpread.data as unknown as Array<{ name: string }>).map((r) => r.name).sort(), ['Ann', 'Ben'])
})

t.test('inside a to-many embed; refused in a to-many spread', async (t) => {
  const r = await s.from('customers').select('name, orders(count(), amount.sum())').order('id')
  t.equal(r.error, null)
  t.same(r.data, [
    { name: 'Ann', orders: [{ count: 2, sum: 30 }] },
    { name: 'Ben', orders: [{ count: 1, sum: 30 }] },
    { name: 'Cal', orders: [{ count: 0, sum: null }] },
  ])
  const spread = await s.from('customers').select('name, ...orders(amount.sum())')
  t.equal(spread.status, 400)
  t.same(spread.error, { code: 'PGRST127', details: 'Aggregates are not implemented for one-to-many or many-to-many spreads.', hint: null, message: 'Feature not implemented' })
})
