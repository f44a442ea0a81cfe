// Computed relationships and the legacy bare count of an embed, through the
// unmodified supabase-js client, as PostgREST 13 answers them: a function
// `f(t) returns setof other` is a to-many relationship named f from t, with
// `rows 1` (or not `setof`) a to-one; it embeds with filters, order, limits,
// `!inner`, spreads and related orders, also recursively and in a write's
// representation; it overrides the foreign-key relationship to the table of
// its name and takes no hint; a new one is embeddable on the next request.
// `rel(count)` (no parentheses) counts the embedded rows without aggregates
// turned on, as `[{"count": n}]`.
import t from 'tap'
import { restProject } from './helpers.ts'

const f = await restProject(t, `
  create table directors (id int primary key, name text not null);
  create table films (id int primary key, title text not null, director_id int references directors(id), year int not null);
  create table premieres (id int primary key, location text not null, film_id int);
  create table employees (id int primary key, name text not null, supervisor_id int references employees(id));

  create function film(premieres) returns setof films rows 1 stable language sql as $$ select * from films where id = $1.film_id $$;
  create function premieres(films) returns setof premieres stable language sql as $$ select * from premieres where film_id = $1.id $$;
  -- Overrides films' key to directors: here only this century's films have a director.
  create function directors(films) returns setof directors rows 1 stable language sql as $$
    select * from directors where id = $1.director_id and $1.year >= 2000 $$;
  create function supervisor(employees) returns setof employees rows 1 stable language sql as $$ select * from employees where id = $1.supervisor_id $$;
  create function supervisees(employees) returns setof employees stable language sql as $$ select * from employees where supervisor_id = $1.id $$;
  create function latest_film(directors) returns films stable language sql as $$
    select * from films where director_id = $1.id order by year desc limit 1 $$;

  insert into directors values (1, 'Lumière'), (2, 'Tarantino');
  insert into films values (1, 'Workers Leaving', 1, 1895), (2, 'Pulp Fiction', 2, 1994), (3, 'Django', 2, 2012);
  insert into premieres values (1, 'Cannes', 2), (2, 'Paris', 1), (3, 'Berlin', 2), (4, 'Nowhere', null);
  insert into employees values (1, 'Taylor', null), (2, 'Johnson', 1), (3, 'Miller', 1), (4, 'Smith', 3);
  grant select on all tables in schema public to anon;
  grant insert on premieres to anon;
`)
const s = f.anon()

t.test('rows 1 is to-one, setof is to-many', async (t) => {
  const one = await s.from('premieres').select('location, film(title)').order('id')
  t.equal(one.error, null)
  t.same(one.data, [
    { location: 'Cannes', film: { title: 'Pulp Fiction' } },
    { location: 'Paris', film: { title: 'Workers Leaving' } },
    { location: 'Berlin', film: { title: 'Pulp Fiction' } },
    { location: 'Nowhere', film: null },
  ])
  const many = await s.from('films').select('title, premieres(location)').order('id').order('location', { referencedTable: 'premieres' })
  t.equal(many.error, null)
  t.same(many.data, [
    { title: 'Workers Leaving', premieres: [{ location: 'Paris' }] },
    { title: 'Pulp Fiction', premieres: [{ location: 'Berlin' }, { location: 'Cannes' }] },
    { title: 'Django', premieres: [] },
  ])
  const single = await s.from('directors').select('name, latest_film(title)').order('id')
  t.equal(single.error, null)
  t.same(single.data, [{ name: 'Lumière', latest_film: { title: 'Workers Leaving' } }, { name: 'Tarantino', latest_film: { title: 'Django' } }])
})

t.test('filters, order, limit, !inner and rel=not.is.null on a computed embed', async (t) => {
  const inner = await s.from('films').select('title, premieres!inner(location)').eq('premieres.location', 'Cannes')
  t.equal(inner.error, null)
  t.same(inner.data, [{ title: 'Pulp Fiction', premieres: [{ location: 'Cannes' }] }])
  const page = await s.from('films').select('title, premieres(location)').eq('id', 2).order('location', { referencedTable: 'premieres', ascending: false }).limit(1, { referencedTable: 'premieres' })
  t.equal(page.error, null)
  t.same(page.data, [{ title: 'Pulp Fiction', premieres: [{ location: 'Cannes' }] }])
  const some = await s.from('films').select('id, premieres()', { count: 'exact' }).not('premieres', 'is', null).order('id')
  t.equal(some.error, null)
  t.same(some.data, [{ id: 1 }, { id: 2 }])
  t.equal(some.count, 2)
})

t.test('related order and spread over a to-one computed embed', async (t) => {
  const ordered = await s.from('premieres').select('location, film(title)').order('film(title)', { ascending: false, nullsFirst: false }).order('id')
  t.equal(ordered.error, null)
  t.same(ordered.data?.map((r) => r.location), ['Paris', 'Cannes', 'Berlin', 'Nowhere'])
  const spread = await s.from('premieres').select('location, ...film(title, year)').eq('id', 2)
  t.equal(spread.error, null)
  t.same(spread.data, [{ location: 'Paris', title: 'Workers Leaving', year: 1895 }])
})

t.test('recursive relationships through functions', async (t) => {
  const r = await s.from('employees').select('name, supervisor(name), supervisees(name)').eq('id', 3)
  t.equal(r.error, null)
  t.same(r.data, [{ name: 'Miller', supervisor: { name: 'Taylor' }, supervisees: [{ name: 'Smith' }] }])
  const tree = await s.from('employees').select('name, supervisees(name, supervisees(name))').eq('id', 1).order('id', { referencedTable: 'supervisees' })
  t.equal(tree.error, null)
  t.same(tree.data, [{ name: 'Taylor', supervisees: [{ name: 'Johnson', supervisees: [] }, { name: 'Miller', supervisees: [{ name: 'Smith' }] }] }])
})

t.test('a computed relationship overrides the foreign key to the table of its name, and takes no hint', async (t) => {
  const r = await s.from('films').select('title, directors(name)').order('id')
  t.equal(r.error, null)
  t.same(r.data, [
    { title: 'Workers Leaving', directors: null },
    { title: 'Pulp Fiction', directors: null },
    { title: 'Django', directors: { name: 'Tarantino' } },
  ])
  const hinted = await s.from('films').select('title, directors!films_director_id_fkey(name)').eq('id', 2)
  t.equal(hinted.error, null)
  t.same(hinted.data, [{ title: 'Pulp Fiction', directors: null }])
  // The other way is still the foreign key's.
  const back = await s.from('directors').select('name, films(title)').eq('id', 2).order('id', { referencedTable: 'films' })
  t.equal(back.error, null)
  t.same(back.data, [{ name: 'Tarantino', films: [{ title: 'Pulp Fiction' }, { title: 'Django' }] }])
  const near = await s.from('films').select('title, premiere(location)')
  t.equal(near.status, 400)
  t.same(near.error, {
    code: 'PGRST200',
    details: "Searched for a foreign key relationship between 'films' and 'premiere' in the schema 'public', but no matches were found.",
    hint: "Perhaps you meant 'premieres' instead of 'premiere'.",
    message: "Could not find a relationship between 'films' and 'premiere' in the schema cache",
  })
})

t.test('the legacy bare count of an embed, without aggregates turned on', async (t) => {
  const computed = await s.from('films').select('title, premieres(count)').order('id')
  t.equal(computed.error, null)
  t.same(computed.data, [
    { title: 'Workers Leaving', premieres: [{ count: 1 }] },
    { title: 'Pulp Fiction', premieres: [{ count: 2 }] },
    { title: 'Django', premieres: [{ count: 0 }] },
  ])
  const byKey = await s.from('directors').select('name, films(count)').order('id')
  t.equal(byKey.error, null)
  t.same(byKey.data, [{ name: 'Lumière', films: [{ count: 1 }] }, { name: 'Tarantino', films: [{ count: 2 }] }])
  const filtered = await s.from('films').select('id, premieres(count)').eq('id', 2).eq('premieres.location', 'Cannes')
  t.equal(filtered.error, null)
  t.same(filtered.data, [{ id: 2, premieres: [{ count: 1 }] }])
  const top = await s.from('premieres').select('count')
  t.equal(top.error, null)
  t.same(top.data, [{ count: 4 }])
  // count() is the aggregate, refused while aggregates are off (PostgREST's default).
  const aggregate = await s.from('films').select('title, premieres(count())')
  t.equal(aggregate.status, 400)
  t.match(aggregate.error, { code: 'PGRST123', message: 'Use of aggregate functions is not allowed' })
})

t.test('a write returns its rows with a computed embed', async (t) => {
  const r = await s.from('premieres').insert({ id: 10, location: 'Venice', film_id: 3 }).select('location, film(title)')
  t.equal(r.error, null)
  t.equal(r.status, 201)
  t.same(r.data, [{ location: 'Venice', film: { title: 'Django' } }])
})

t.test('a new function is embeddable on the next request; the OpenAPI description notes no computed relationship', async (t) => {
  const before = await s.from('films').select('title, premiered_in(location)')
  t.match(before.error, { code: 'PGRST200' })
  await f.sql(`create function premiered_in(films) returns setof premieres stable language sql as $$ select * from premieres where film_id = $1.id $$`)
  const after = await s.from('films').select('title, premiered_in(location)').eq('id', 1)
  t.equal(after.error, null)
  t.same(after.data, [{ title: 'Workers Leaving', premiered_in: [{ location: 'Paris' }] }])
  const doc = await f.raw<{ definitions: Record<string, { properties: Record<string, { description?: string }> }> }>('/')
  t.equal(doc.status, 200)
  t.equal(doc.json.definitions.premieres!.properties.film_id!.description, undefined)
  // PostgREST's notes come from its relationships, where directors(films) replaced the key's.
  t.equal(doc.json.definitions.films!.properties.director_id!.description, undefined)
  t.equal(doc.json.definitions.employees!.properties.supervisor_id!.description, "Note:\nThis is a Foreign Key to `employees.id`.<fk table='employees' column='id'/>")
})
