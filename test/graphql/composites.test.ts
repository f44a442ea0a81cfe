// SPEC 2.4 `composites` (schema): a column of a composite type is an object
// of its attributes (type named after the composite type, inflected as a
// table's), selected with a sub-selection, filtered by attribute, written as
// `<Composite>Input` (attributes left out are null); functions may take and
// return composite values.
import t from 'tap'
import { graphqlProject } from './helpers.ts'

const ANN = '11111111-1111-1111-1111-111111111111'
const BOB = '22222222-2222-2222-2222-222222222222'

const ON = `comment on schema public is e'@graphql({"composites": {"enabled": true}})'`

const SETUP = `
  ${ON};
  create type mood as enum ('open', 'closed');
  create type address as (street text, city text, zip varchar(4), since date);
  comment on type address is 'A postal address';
  comment on column address.zip is 'Postal code';
  create type place as (label text, at address, state mood, tags text[], size bigint);
  create table shop (id int primary key, name text not null, address address, place place, owner uuid default auth.uid());
  insert into shop values
    (1, 'Ann''s', row('Karl Johans gate 1', 'Oslo', '0154', '2020-01-02'), row('main', row(null, 'Oslo', null, null), 'open', '{a,b}', 9007199254740993), '${ANN}'),
    (2, 'Bob''s', row('Torget 2', 'Bergen', '5014', null), null, '${BOB}'),
    (3, 'Nobody''s', null, row(null, null, null, null, null), null),
    (4, 'Blank', row(null, null, null, null), null, null);
  alter table shop enable row level security;
  create policy read on shop for select using (owner is null or owner = auth.uid());
  create policy add on shop for insert to authenticated with check (owner = auth.uid());
  create policy edit on shop for update to authenticated using (owner = auth.uid());
  create function home(s shop) returns address language sql stable as 'select s.address';
  create function make_address(city text) returns address language sql immutable as $$ select row('Main St', city, null, null)::address $$;
  create function no_address() returns address language sql immutable as 'select null::address';
  create function relocate(shop_id int, to_address address) returns address language sql volatile
    as 'update shop set address = to_address where id = shop_id returning address';
`

t.test('composites', async (t) => {
  const p = await graphqlProject(t, SETUP)
  const ids = (...list: number[]) => ({ data: { shopCollection: { edges: list.map((id) => ({ node: { id } })) } } })
  const idsWhere = (filter: string, options = {}) => p.gql(`{ shopCollection(filter: ${filter}) { edges { node { id } } } }`, options)
  const oslo = { street: 'Karl Johans gate 1', city: 'Oslo', zip: '0154', since: '2020-01-02' }
  const bergen = { street: 'Torget 2', city: 'Bergen', zip: '5014', since: null }
  const blank = { street: null, city: null, zip: null, since: null }

  t.test('columns are objects of their attributes', async (t) => {
    t.same(await p.gql(`{ shopCollection { edges { node { id address { street city zip since } } } } }`), {
      data: { shopCollection: { edges: [
        { node: { id: 1, address: oslo } },
        { node: { id: 2, address: bergen } },
        { node: { id: 3, address: null } },
        { node: { id: 4, address: blank } },
      ] } },
    }, 'a null value is null; a value of null attributes is an object')
    t.same(await p.gql(`{ shopCollection(first: 3) { edges { node { place { __typename label state tags size at { city zip } } town: address { c: city } } } } }`), {
      data: { shopCollection: { edges: [
        { node: { place: { __typename: 'place', label: 'main', state: 'open', tags: ['a', 'b'], size: '9007199254740993', at: { city: 'Oslo', zip: null } }, town: { c: 'Oslo' } } },
        { node: { place: null, town: { c: 'Bergen' } } },
        { node: { place: { __typename: 'place', label: null, state: null, tags: null, size: null, at: null }, town: null } },
      ] } },
    }, 'nested composites, enums, arrays, bigint, aliases, __typename')
    t.same(await p.gql(`{ shopByPk(id: 2) { ...A } } fragment A on shop { address { ... on address { city } zip } }`), {
      data: { shopByPk: { address: { city: 'Bergen', zip: '5014' } } },
    })
  })

  t.test('filters by attribute', async (t) => {
    t.same(await idsWhere(`{address: {city: {eq: "Oslo"}}}`), ids(1))
    t.same(await idsWhere(`{address: {city: {in: ["Oslo", "Bergen"]}, zip: {like: "5%"}}}`), ids(2))
    t.same(await idsWhere(`{address: {city: {is: NULL}}}`), ids(3, 4))
    t.same(await idsWhere(`{address: {since: {gt: "2019-12-31"}}}`), ids(1))
    t.same(await idsWhere(`{place: {at: {city: {eq: "Oslo"}}, state: {eq: open}}}`), ids(1))
    t.same(await idsWhere(`{place: {tags: {contains: ["b"]}}}`), ids(1))
    t.same(await idsWhere(`{or: [{address: {city: {eq: "Bergen"}}}, {not: {place: {label: {is: NULL}}}}]}`), ids(1, 2))
    const query = `query ($c: String) { shopCollection(filter: {address: {city: {eq: $c}}}) { edges { node { id } } } }`
    t.same(await p.gql(query, { variables: { c: 'Bergen' } }), ids(2))
    t.same(await p.gql(query, { variables: { c: 'Oslo' } }), ids(1))
    t.same(await idsWhere(`{address: {}}`), ids(1, 2, 3, 4), 'an empty filter is no condition')
  })

  t.test('written as <Composite>Input', async (t) => {
    t.same(await p.gql(`mutation { insertIntoshopCollection(objects: [
      {id: 5, name: "Quoted", address: {street: "a \\"b\\", (c) \\\\ d", city: "", zip: "1"}},
      {id: 6, name: "Nested", place: {label: "x", at: {city: "Oslo"}, state: closed, tags: ["p q", "r,s"], size: "12"}}
    ]) { affectedCount records { id address { street city zip since } place { label at { street city } state tags size } } } }`), {
      data: { insertIntoshopCollection: { affectedCount: 2, records: [
        { id: 5, address: { street: 'a "b", (c) \\ d', city: '', zip: '1', since: null }, place: null },
        { id: 6, address: null, place: { label: 'x', at: { street: null, city: 'Oslo' }, state: 'closed', tags: ['p q', 'r,s'], size: '12' } },
      ] } },
    })
    const { rows } = await p.sql(`select address::text, place::text from shop where id in (5, 6) order by id`)
    t.same(rows, [
      { address: '("a ""b"", (c) \\\\ d","",1,)', place: null },
      { address: null, place: '(x,"(,Oslo,,)",closed,"{""p q"",""r,s""}",12)' },
    ], 'stored as written: an empty string is a string, an attribute left out is null')
    t.same(await p.gql(`mutation ($a: addressInput) { updateshopCollection(set: {address: $a}, filter: {id: {eq: 5}}) { records { address { city zip } } } }`, {
      variables: { a: { city: 'Tromsø' } },
    }), { data: { updateshopCollection: { records: [{ address: { city: 'Tromsø', zip: null } }] } } })
    t.same(await p.gql(`mutation { updateshopCollection(set: {address: null}, filter: {id: {eq: 5}}) { records { address { city } } } }`), {
      data: { updateshopCollection: { records: [{ address: null }] } },
    })
    await p.sql(`delete from shop where id in (5, 6)`)
  })

  t.test('refusals write nothing', async (t) => {
    const insert = (object: string) => p.gql(`mutation { insertIntoshopCollection(objects: [{id: 7, name: "ok"}, {id: 8, name: "bad", ${object}}]) { affectedCount } }`)
    t.same(await insert(`address: {town: "x"}`), {
      data: null,
      errors: [{ message: 'Field "town" is not defined by type "addressInput".' }],
    })
    t.same(await insert(`address: {zip: "12345"}`), { data: null, errors: [{ message: 'Invalid input for String type. Maximum character length 4' }] })
    t.same(await insert(`address: {since: "not a date"}`), { data: null, errors: [{ message: 'invalid input syntax for type date: "not a date"' }] })
    t.same(await insert(`address: "(a,b,c,d)"`), {
      data: null,
      errors: [{ message: 'Expected value of type "addressInput", found "(a,b,c,d)".' }],
    })
    t.same(await p.gql(`{ shopCollection { edges { node { address } } } }`), {
      data: null,
      errors: [{ message: 'Field "address" of type "address" must have a selection of subfields. Did you mean "address { ... }"?' }],
    })
    t.same(await idsWhere(`{address: {city: {gt: 1}}}`), { data: null, errors: [{ message: 'String cannot represent a non string value: 1' }] })
    t.same(await idsWhere(`{address: {town: {eq: "x"}}}`), {
      data: null,
      errors: [{ message: 'Field "town" is not defined by type "addressFilter".' }],
    })
    t.same(await idsWhere(`{id: {gte: 5}}`), ids(), 'nothing was written')
  })

  t.test('functions take and return composite values', async (t) => {
    t.same(await p.gql(`{ make_address(city: "Oslo") { street city zip } no_address { city } shopByPk(id: 1) { home { city } } }`), {
      data: { make_address: { street: 'Main St', city: 'Oslo', zip: null }, no_address: null, shopByPk: { home: { city: 'Oslo' } } },
    })
    t.same(await p.gql(`mutation { relocate(shop_id: 2, to_address: {street: "Bryggen 1", city: "Bergen"}) { street city zip } }`), {
      data: { relocate: { street: 'Bryggen 1', city: 'Bergen', zip: null } },
    })
    t.same(await p.gql(`{ shopByPk(id: 2) { address { street city } } }`), { data: { shopByPk: { address: { street: 'Bryggen 1', city: 'Bergen' } } } })
    t.same(await p.gql(`mutation { relocate(shop_id: 2, to_address: {zip: "99999"}) { city } }`), {
      data: null,
      errors: [{ message: 'Invalid input for String type. Maximum character length 4' }],
    })
    t.same(await p.gql(`{ make_address(city: "Oslo") }`), {
      data: null,
      errors: [{ message: 'Field "make_address" of type "address" must have a selection of subfields. Did you mean "make_address { ... }"?' }],
    })
    await p.sql(`update shop set address = row('Torget 2', 'Bergen', '5014', null) where id = 2`)
  })

  t.test('row level security: anon and a signed-in user', async (t) => {
    t.same(await idsWhere(`{address: {city: {in: ["Oslo", "Bergen"]}}}`, { role: 'anon' }), ids())
    t.same(await idsWhere(`{address: {city: {in: ["Oslo", "Bergen"]}}}`, { role: 'authenticated', sub: BOB }), ids(2))
    const edit = `mutation { updateshopCollection(set: {address: {city: "Moved"}}, filter: {address: {city: {eq: "Oslo"}}}) { affectedCount records { address { city } } } }`
    t.same(await p.gql(edit, { role: 'authenticated', sub: BOB }), { data: { updateshopCollection: { affectedCount: 0, records: [] } } })
    t.same(await p.gql(edit, { role: 'authenticated', sub: ANN }), { data: { updateshopCollection: { affectedCount: 1, records: [{ address: { city: 'Moved' } }] } } })
    const add = `mutation { insertIntoshopCollection(objects: [{id: 9, name: "Bob 2", address: {city: "Bodø"}}]) { records { id owner address { city } } } }`
    t.same(await p.gql(add, { role: 'authenticated', sub: BOB }), { data: { insertIntoshopCollection: { records: [{ id: 9, owner: BOB, address: { city: 'Bodø' } }] } } })
    await p.sql(`delete from shop where id = 9; update shop set address = row('Karl Johans gate 1', 'Oslo', '0154', '2020-01-02') where id = 1`)
  })

  t.test('introspected: fields, types and descriptions', async (t) => {
    await p.sql(`comment on schema public is e'@graphql({"composites": {"enabled": true}, "introspection": true})'`)
    const named = (kind: string, name: string | null, ofType: unknown = null) => ({ kind, name, ofType })
    t.same(await p.gql(`{ __type(name: "address") { kind description fields { name description type { kind name ofType { kind name } } } } }`), {
      data: { __type: { kind: 'OBJECT', description: 'A postal address', fields: [
        { name: 'street', description: null, type: named('SCALAR', 'String') },
        { name: 'city', description: null, type: named('SCALAR', 'String') },
        { name: 'zip', description: 'Postal code', type: named('SCALAR', 'String') },
        { name: 'since', description: null, type: named('SCALAR', 'Date') },
      ] } },
    })
    t.same(await p.gql(`{ __type(name: "placeFilter") { inputFields { name type { name } } } }`), {
      data: { __type: { inputFields: [
        { name: 'label', type: { name: 'StringFilter' } },
        { name: 'at', type: { name: 'addressFilter' } },
        { name: 'state', type: { name: 'moodFilter' } },
        { name: 'tags', type: { name: 'StringListFilter' } },
        { name: 'size', type: { name: 'BigIntFilter' } },
      ] } },
    })
    t.same(await p.gql(`{ __type(name: "placeInput") { inputFields { name type { name kind ofType { name } } } } }`), {
      data: { __type: { inputFields: [
        { name: 'label', type: { name: 'String', kind: 'SCALAR', ofType: null } },
        { name: 'at', type: { name: 'addressInput', kind: 'INPUT_OBJECT', ofType: null } },
        { name: 'state', type: { name: 'mood', kind: 'ENUM', ofType: null } },
        { name: 'tags', type: { name: null, kind: 'LIST', ofType: { name: 'String' } } },
        { name: 'size', type: { name: 'BigInt', kind: 'SCALAR', ofType: null } },
      ] } },
    })
    await p.sql(ON)
  })

  t.test('names are inflected as a table\'s', async (t) => {
    await p.sql(`comment on schema public is e'@graphql({"composites": {"enabled": true}, "inflect_names": true})'`)
    t.same(await p.gql(`{ shopCollection(filter: {address: {city: {eq: "Oslo"}}}) { edges { node { address { __typename city } place { at { __typename } } } } } }`), {
      data: { shopCollection: { edges: [{ node: { address: { __typename: 'Address', city: 'Oslo' }, place: { at: { __typename: 'Address' } } } }] } },
    })
    t.same(await p.gql(`mutation ($a: AddressInput) { updateShopCollection(set: {address: $a}, filter: {id: {eq: 4}}) { affectedCount } }`, { variables: { a: {} } }), {
      data: { updateShopCollection: { affectedCount: 1 } },
    })
    await p.sql(ON)
  })

  t.test('off: composite columns and functions are left out, as before', async (t) => {
    await p.sql(`comment on schema public is null`)
    t.same(await p.gql(`{ shopCollection { edges { node { id address { city } } } } }`), {
      data: null,
      errors: [{ message: 'Cannot query field "address" on type "shop".' }],
    })
    t.same(await p.gql(`{ make_address(city: "x") { city } }`), {
      data: null,
      errors: [{ message: 'Cannot query field "make_address" on type "Query".' }],
    })
    t.same(await p.gql(`{ shopByPk(id: 1) { id name } }`), { data: { shopByPk: { id: 1, name: "Ann's" } } })
    await p.sql(ON)
  })
})
