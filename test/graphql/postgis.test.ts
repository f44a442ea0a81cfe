// SPEC 2.4 `postgis`: geometry and geography columns, arguments and results
// as scalar GeoJSON (read as objects, written from objects or JSON text),
// filters intersects/contains/within/dWithin, refusals that write nothing,
// row-level security as anon and as a signed-in user, and the schema as
// before with the addition off. Runs on a PostgreSQL with PostGIS
// (postgis-helpers.ts); where there is none every test says why and skips.
import pg from 'pg'
import t from 'tap'
import { apiDatabaseOf } from '../../lib/catalogue.ts'
import { identityStatement } from '../../lib/db/request-transaction.ts'
import { resolve, SchemaCache, type GraphqlRequest } from '../../workers/graphql/index.ts'
import { postgisProject, postgisServer } from './postgis-helpers.ts'

const ANN = '11111111-1111-1111-1111-111111111111'
const BOB = '22222222-2222-2222-2222-222222222222'

const server = await postgisServer()
const skip = 'skip' in server ? server.skip : false
if (skip) t.comment(`PostGIS tests skipped: ${skip}`)
const serverUrl = 'url' in server ? server.url : ''

const ON = `comment on schema public is e'@graphql({"postgis": {"enabled": true}, "introspection": true})';`

const SETUP = `
  ${ON}
  create table place (
    id int primary key,
    name text not null,
    location extensions.geometry(Point, 4326),
    area extensions.geography(Polygon, 4326)
  );
  insert into place values
    (1, 'Oslo', 'SRID=4326;POINT(10.75 59.91)', 'SRID=4326;POLYGON((10.5 59.8, 11 59.8, 11 60.1, 10.5 60.1, 10.5 59.8))'),
    (2, 'Bergen', 'SRID=4326;POINT(5.32 60.39)', null),
    (3, 'Trondheim', 'SRID=4326;POINT(10.39 63.43)', null);
  create function centroid_of(g extensions.geometry) returns extensions.geometry immutable language sql
    as $$ select extensions.st_centroid(g) $$;
  create function places_near(p extensions.geometry, km float8) returns setof place stable language sql
    as $$ select * from place where extensions.st_dwithin(location::extensions.geography, p::extensions.geography, km * 1000) $$;
  create function moved(rec place) returns extensions.geometry stable language sql
    as $$ select extensions.st_translate(rec.location, 1, 1) $$;
  create table spot (
    id int primary key,
    owner_id uuid not null default auth.uid(),
    public boolean not null default false,
    at extensions.geometry(Point, 4326) not null
  );
  alter table spot enable row level security;
  create policy read on spot for select using (public or owner_id = auth.uid());
  create policy write_own on spot for insert to authenticated with check (owner_id = auth.uid());
  insert into spot values
    (1, '${ANN}', true, 'SRID=4326;POINT(10.75 59.91)'),
    (2, '${ANN}', false, 'SRID=4326;POINT(10.76 59.92)'),
    (3, '${BOB}', false, 'SRID=4326;POINT(10.74 59.90)'),
    (4, '${BOB}', true, 'SRID=4326;POINT(5.32 60.39)');
`

const point = (x: number, y: number) => ({ type: 'Point', coordinates: [x, y] })
const OSLO = point(10.75, 59.91)
const BERGEN = point(5.32, 60.39)
const TRONDHEIM = point(10.39, 63.43)
const OSLO_AREA = { type: 'Polygon', coordinates: [[[10.5, 59.8], [11, 59.8], [11, 60.1], [10.5, 60.1], [10.5, 59.8]]] }
// A box around Oslo and Bergen, not Trondheim.
const SOUTH = { type: 'Polygon', coordinates: [[[5, 59], [11, 59], [11, 61], [5, 61], [5, 59]]] }

const BAD_GEOJSON =
  'Invalid input for GeoJSON type. Expected a GeoJSON geometry (an object, or its JSON text): Point, LineString, Polygon, MultiPoint, MultiLineString, MultiPolygon or GeometryCollection with valid coordinates'

const ids = (name: string, ...list: number[]) => ({ data: { [name]: { edges: list.map((id) => ({ node: { id } })) } } })

t.test('postgis', { skip }, async (t) => {
  const p = await postgisProject(t, serverUrl, SETUP)
  const count = async () => Number((await p.sql('select count(*) from place')).rows[0].count)

  t.test('columns read as GeoJSON objects, geometry and geography', async (t) => {
    t.same(await p.gql('{ placeCollection { edges { node { id name location area } } } }'), {
      data: { placeCollection: { edges: [
        { node: { id: 1, name: 'Oslo', location: OSLO, area: OSLO_AREA } },
        { node: { id: 2, name: 'Bergen', location: BERGEN, area: null } },
        { node: { id: 3, name: 'Trondheim', location: TRONDHEIM, area: null } },
      ] } },
    })
    t.same(await p.gql('{ placeByPk(id: 1) { moved } }'), { data: { placeByPk: { moved: point(11.75, 60.91) } } }, 'a computed field')
  })

  t.test('filters', async (t) => {
    const q = (filter: string) => `{ placeCollection(filter: ${filter}) { edges { node { id } } } }`
    const south = JSON.stringify(SOUTH).replace(/"(\w+)":/g, '$1:')
    t.same(await p.gql(q(`{location: {intersects: ${south}}}`)), ids('placeCollection', 1, 2))
    t.same(await p.gql(q(`{location: {within: ${south}}}`)), ids('placeCollection', 1, 2))
    t.same(await p.gql(q(`{not: {location: {within: ${south}}}}`)), ids('placeCollection', 3))
    t.same(await p.gql(q(`{area: {contains: {type: "Point", coordinates: [10.75, 59.91]}}}`)), ids('placeCollection', 1), 'geography contains (covers)')
    t.same(await p.gql(q(`{area: {contains: {type: "Point", coordinates: [5.32, 60.39]}}}`)), ids('placeCollection'))
    t.same(await p.gql(q(`{area: {is: NULL}}`)), ids('placeCollection', 2, 3))
    // Degrees for geometry (SRID 4326), metres for geography.
    t.same(await p.gql(q(`{location: {dWithin: {geometry: {type: "Point", coordinates: [10.5, 60]}, distance: 1}}}`)), ids('placeCollection', 1))
    t.same(await p.gql(q(`{location: {dWithin: {geometry: {type: "Point", coordinates: [10.5, 60]}, distance: 4}}}`)), ids('placeCollection', 1, 3))
    t.same(await p.gql(q(`{area: {dWithin: {geometry: {type: "Point", coordinates: [5.32, 60.39]}, distance: 100000}}}`)), ids('placeCollection'))
    t.same(await p.gql(q(`{area: {dWithin: {geometry: {type: "Point", coordinates: [5.32, 60.39]}, distance: 400000}}}`)), ids('placeCollection', 1))
    t.same(await p.gql(q(`{or: [{location: {within: ${south}}}, {name: {eq: "Trondheim"}}], location: {intersects: {type: "Point", coordinates: [5.32, 60.39]}}}`)), ids('placeCollection', 2))

    // One document, one statement: the geometries are its parameters, object or JSON text.
    const byVariable = 'query($g: GeoJSON!) { placeCollection(filter: {location: {intersects: $g}}) { edges { node { id } } } }'
    t.same(await p.gql(byVariable, { variables: { g: SOUTH } }), ids('placeCollection', 1, 2))
    t.same(await p.gql(byVariable, { variables: { g: JSON.stringify(TRONDHEIM) } }), ids('placeCollection', 3))
    t.same(await p.gql(byVariable, { variables: { g: OSLO } }), ids('placeCollection', 1))
  })

  t.test('prepared statements: the geometry and the distance are parameters', async (t) => {
    const db = apiDatabaseOf(p.project)
    const client = new pg.Client({ host: db.host, port: db.port, database: db.database, user: db.user, password: db.password })
    await client.connect()
    t.teardown(() => client.end())
    const cache = new SchemaCache()
    const who = { role: 'anon', claims: { role: 'anon' } }
    // As the HTTP service calls it (test/graphql/prepared.test.ts).
    const ask = (request: GraphqlRequest) =>
      resolve(client, request, { cache, transaction: 'none', setup: identityStatement(who, p.project.roleTimeouts), speculationKey: who.role })
    const statements = async () =>
      (await client.query<{ parameter_types: string }>(
        `select parameter_types::text from pg_prepared_statements where name like 'baseplane\\_q\\_%' order by prepare_time`,
      )).rows.map((r) => r.parameter_types)
    const near = 'query($g: GeoJSON!, $d: Float!) { placeCollection(filter: {location: {dWithin: {geometry: $g, distance: $d}}}) { edges { node { id } } } }'
    t.same(await ask({ query: near, variables: { g: point(10.5, 60), d: 1 } }), ids('placeCollection', 1))
    t.same(await ask({ query: near, variables: { g: point(10.5, 60), d: 4 } }), ids('placeCollection', 1, 3))
    t.same(await ask({ query: near, variables: { g: JSON.stringify(BERGEN), d: 0.5 } }), ids('placeCollection', 2))
    t.same(await statements(), ['{text,"double precision"}', '{text,"double precision"}'], 'the schema read, then one statement for every value')
  })

  t.test('functions take and return GeoJSON', async (t) => {
    t.same(await p.gql('{ centroid_of(g: {type: "LineString", coordinates: [[0, 0], [2, 4]]}) }'), { data: { centroid_of: point(1, 2) } })
    t.same(await p.gql('query($g: GeoJSON!) { places_near(p: $g, km: 50) { edges { node { id name } } } }', { variables: { g: point(10.7, 59.9) } }), {
      data: { places_near: { edges: [{ node: { id: 1, name: 'Oslo' } }] } },
    })
  })

  t.test('writes from objects and JSON text', async (t) => {
    t.same(await p.gql(`mutation($loc: GeoJSON) {
      insertIntoplaceCollection(objects: [
        {id: 4, name: "Stavanger", location: {type: "Point", coordinates: [5.73, 58.97]}},
        {id: 5, name: "Tromsø", location: $loc, area: {type: "Polygon", coordinates: [[[18, 69], [19, 69], [19, 70], [18, 69]]]}}
      ]) { affectedCount records { id location area } } }`, { variables: { loc: '{"type": "Point", "coordinates": [18.95, 69.65]}' } }), {
      data: { insertIntoplaceCollection: { affectedCount: 2, records: [
        { id: 4, location: point(5.73, 58.97), area: null },
        { id: 5, location: point(18.95, 69.65), area: { type: 'Polygon', coordinates: [[[18, 69], [19, 69], [19, 70], [18, 69]]] } },
      ] } },
    })
    t.same((await p.sql(`select id, extensions.st_astext(location) as wkt, extensions.st_srid(location) as srid from place where id >= 4 order by id`)).rows, [
      { id: 4, wkt: 'POINT(5.73 58.97)', srid: 4326 },
      { id: 5, wkt: 'POINT(18.95 69.65)', srid: 4326 },
    ], 'stored as PostGIS values with the column SRID')
    t.same(await p.gql('mutation { updateplaceCollection(set: {location: {type: "Point", coordinates: [5.7, 58.9]}}, filter: {id: {eq: 4}}) { records { id location } } }'), {
      data: { updateplaceCollection: { records: [{ id: 4, location: point(5.7, 58.9) }] } },
    })
    t.same(await p.gql('mutation { updateplaceCollection(set: {location: null}, filter: {id: {eq: 4}}) { records { id location } } }'), {
      data: { updateplaceCollection: { records: [{ id: 4, location: null }] } },
    })
    await p.sql('delete from place where id >= 4')
  })

  t.test('bad GeoJSON is refused and nothing is written', async (t) => {
    const before = await count()
    const insert = (location: string) => `mutation { insertIntoplaceCollection(objects: [{id: 9, name: "x"}, {id: 10, name: "y", location: ${location}}]) { affectedCount } }`
    t.same(await p.gql(insert('{type: "Pointy", coordinates: [1, 2]}')), {
      data: null,
      errors: [{ message: `Expected value of type "GeoJSON", found {type: "Pointy", coordinates: [1, 2]}; ${BAD_GEOJSON}` }],
    })
    t.same(await p.gql(insert('{type: "Point", coordinates: [1]}')), {
      data: null,
      errors: [{ message: `Expected value of type "GeoJSON", found {type: "Point", coordinates: [1]}; ${BAD_GEOJSON}` }],
    })
    t.same(await p.gql(insert('"POINT(1 2)"')), {
      data: null,
      errors: [{ message: `Expected value of type "GeoJSON", found "POINT(1 2)"; ${BAD_GEOJSON}` }],
    })
    t.same(await p.gql(insert('42')), {
      data: null,
      errors: [{ message: `Expected value of type "GeoJSON", found 42; ${BAD_GEOJSON}` }],
    })
    const byVariable = 'mutation($g: GeoJSON) { insertIntoplaceCollection(objects: [{id: 9, name: "x", location: $g}]) { affectedCount } }'
    t.same(await p.gql(byVariable, { variables: { g: 'not json' } }), {
      data: null,
      errors: [{ message: `Variable "$g" got invalid value "not json"; Expected type "GeoJSON". ${BAD_GEOJSON}` }],
    })
    t.same(await p.gql(byVariable, { variables: { g: { type: 'Feature', geometry: null } } }), {
      data: null,
      errors: [{ message: `Variable "$g" got invalid value { type: "Feature", geometry: null }; Expected type "GeoJSON". ${BAD_GEOJSON}` }],
    })
    // Valid GeoJSON that the column's type refuses: PostGIS's own words, and the first row is not kept either.
    t.same(await p.gql(insert(JSON.stringify(SOUTH).replace(/"(\w+)":/g, '$1:'))), {
      data: null,
      errors: [{ message: 'Geometry type (Polygon) does not match column type (Point)' }],
    })
    // An open ring: PostGIS would keep it in a geography; GeoJSON (RFC 7946) says a ring ends where it starts.
    t.same(await p.gql(insert('{type: "Polygon", coordinates: [[[1, 1], [2, 1], [2, 2], [1, 2]]]}')), {
      data: null,
      errors: [{ message: `Expected value of type "GeoJSON", found {type: "Polygon", coordinates: [[[1, 1], [2, 1], [2, 2], [1, 2]]]}; ${BAD_GEOJSON}` }],
    })
    t.same(await p.gql(byVariable, { variables: { g: '{"type": "LineString", "coordinates": [[1, 2]]}' } }), {
      data: null,
      errors: [{ message: `Variable "$g" got invalid value "{\\"type\\": \\"LineString\\", \\"coordinates\\": [[1, 2]]}"; Expected type "GeoJSON". ${BAD_GEOJSON}` }],
    })
    t.same(await p.gql('query($g: GeoJSON!) { placeCollection(filter: {location: {dWithin: {geometry: $g, distance: -1}}}) { edges { node { id } } } }', { variables: { g: OSLO } }), {
      data: null,
      errors: [{ message: 'Invalid input for GeoJSONDWithinInput type. distance must be zero or more' }],
    })
    t.same(await p.gql('{ placeCollection(filter: {location: {dWithin: {geometry: {type: "Point", coordinates: [1, 2]}}}}) { edges { node { id } } } }'), {
      data: null,
      errors: [{ message: 'Field "GeoJSONDWithinInput.distance" of required type "Float!" was not provided.' }],
    })
    t.same(await p.gql('{ placeCollection(filter: {location: {eq: {type: "Point", coordinates: [1, 2]}}}) { edges { node { id } } } }'), {
      data: null,
      errors: [{ message: 'Field "eq" is not defined by type "GeoJSONFilter".' }],
    })
    t.equal(await count(), before, 'nothing written')
  })

  t.test('the schema: GeoJSON, its filter and dWithin operand', async (t) => {
    t.same(await p.gql(`{
      scalar: __type(name: "GeoJSON") { kind description }
      filter: __type(name: "GeoJSONFilter") { inputFields { name type { name kind ofType { name } } } }
      place: __type(name: "place") { fields { name type { name } } }
    }`), {
      data: {
        scalar: { kind: 'SCALAR', description: 'A GeoJSON geometry: an object, or its JSON text, as input; an object as output' },
        filter: { inputFields: [
          { name: 'contains', type: { name: 'GeoJSON', kind: 'SCALAR', ofType: null } },
          { name: 'dWithin', type: { name: 'GeoJSONDWithinInput', kind: 'INPUT_OBJECT', ofType: null } },
          { name: 'intersects', type: { name: 'GeoJSON', kind: 'SCALAR', ofType: null } },
          { name: 'is', type: { name: 'FilterIs', kind: 'ENUM', ofType: null } },
          { name: 'within', type: { name: 'GeoJSON', kind: 'SCALAR', ofType: null } },
        ] },
        place: { fields: [
          { name: 'nodeId', type: { name: null } },
          { name: 'id', type: { name: null } },
          { name: 'name', type: { name: null } },
          { name: 'location', type: { name: 'GeoJSON' } },
          { name: 'area', type: { name: 'GeoJSON' } },
          { name: 'moved', type: { name: 'GeoJSON' } },
        ] },
      },
    })
    t.same(await p.gql('{ placeCollection(orderBy: [{location: AscNullsLast}]) { edges { node { id } } } }'), {
      data: null,
      errors: [{ message: 'Field "location" is not defined by type "placeOrderBy".' }],
    }, 'shapes are not ordered')
  })

  t.test('row-level security as anon and as signed-in users', async (t) => {
    const near = '{ spotCollection(filter: {at: {dWithin: {geometry: {type: "Point", coordinates: [10.75, 59.91]}, distance: 0.1}}}) { edges { node { id } } } }'
    t.same(await p.gql(near, { role: 'anon' }), ids('spotCollection', 1))
    t.same(await p.gql(near, { role: 'authenticated', sub: ANN }), ids('spotCollection', 1, 2))
    t.same(await p.gql(near, { role: 'authenticated', sub: BOB }), ids('spotCollection', 1, 3))
    t.same(await p.gql('{ spotCollection(filter: {at: {within: {type: "Polygon", coordinates: [[[5, 60], [6, 60], [6, 61], [5, 61], [5, 60]]]}}}) { edges { node { id at } } } }', { role: 'anon' }), {
      data: { spotCollection: { edges: [{ node: { id: 4, at: BERGEN } }] } },
    })

    const insert = 'mutation($at: GeoJSON!, $owner: UUID) { insertIntospotCollection(objects: [{id: 5, at: $at, owner_id: $owner}]) { records { id owner_id at } } }'
    t.same(await p.gql(insert, { role: 'authenticated', sub: BOB, variables: { at: OSLO } }), {
      data: { insertIntospotCollection: { records: [{ id: 5, owner_id: BOB, at: OSLO }] } },
    })
    t.same(await p.gql(insert, { role: 'authenticated', sub: BOB, variables: { at: OSLO, owner: ANN } }), {
      data: null,
      errors: [{ message: 'new row violates row-level security policy for table "spot"' }],
    })
    t.same(await p.gql(insert, { role: 'anon', variables: { at: OSLO } }), {
      data: null,
      errors: [{ message: 'new row violates row-level security policy for table "spot"' }],
    })
    t.same(await p.gql(near, { role: 'authenticated', sub: ANN }), ids('spotCollection', 1, 2), 'the refused inserts wrote nothing')
    t.same(await p.gql(near, { role: 'authenticated', sub: BOB }), ids('spotCollection', 1, 3, 5))
  })

  t.test('with domains on, a domain over geometry is GeoJSON too', async (t) => {
    await p.sql(`create domain point4326 as extensions.geometry(Point, 4326) check (extensions.st_x(value) between -180 and 180);
      create table marker (id int primary key, at point4326 not null);
      comment on schema public is e'@graphql({"postgis": {"enabled": true}, "domains": {"enabled": true}})'`)
    t.teardown(() => p.sql(`drop table marker; drop domain point4326; ${ON}`))
    t.same(await p.gql('mutation { insertIntomarkerCollection(objects: [{id: 1, at: {type: "Point", coordinates: [10.75, 59.91]}}]) { records { id at } } }'), {
      data: { insertIntomarkerCollection: { records: [{ id: 1, at: OSLO }] } },
    })
    t.same(await p.gql('{ markerCollection(filter: {at: {intersects: {type: "Point", coordinates: [10.75, 59.91]}}}) { edges { node { id } } } }'), ids('markerCollection', 1))
    t.same(await p.gql('mutation { insertIntomarkerCollection(objects: [{id: 2, at: {type: "Point", coordinates: [200, 0]}}]) { affectedCount } }'), {
      data: null,
      errors: [{ message: 'value for domain point4326 violates check constraint "point4326_check"' }],
    })
  })

  t.test('off: geometry stays Opaque and the spatial filters do not exist', async (t) => {
    await p.sql(`comment on schema public is e'@graphql({"introspection": true})'`)
    t.teardown(() => p.sql(ON))
    // Opaque writes the value as PostgreSQL's JSON of it: PostGIS's own geometry-to-json cast, which names the CRS.
    t.same(await p.gql('{ placeByPk(id: 1) { location } }'), {
      data: { placeByPk: { location: { type: 'Point', crs: { type: 'name', properties: { name: 'EPSG:4326' } }, coordinates: [10.75, 59.91] } } },
    })
    t.same(await p.gql('{ placeCollection(filter: {location: {intersects: {type: "Point", coordinates: [1, 2]}}}) { edges { node { id } } } }'), {
      data: null,
      errors: [{ message: 'Field "intersects" is not defined by type "OpaqueFilter".' }],
    })
    t.same(await p.gql('{ a: __type(name: "GeoJSON") { name } b: __type(name: "GeoJSONFilter") { name } }'), { data: { a: null, b: null } })
  })
})
