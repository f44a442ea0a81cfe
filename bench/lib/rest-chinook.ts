// PostgREST's own benchmark workloads (github.com/PostgREST/postgrest-benchmark:
// reads/singleObject.js, reads/singleObject3LevEmbed.js, writes/singleObject.js)
// on a Chinook database, so that a runner can set bench:rest's figures beside
// PostgREST's published ones, or beside PostgREST itself run on the same
// machine (bench/README.md says how).
//
// The data is generated here, not loaded from Chinook's SQL file: the tables
// and columns are Chinook's (the PostgreSQL edition postgrest-benchmark loads,
// snake_case names, serial keys), with Chinook's row counts (275 artists, 347
// albums, 3,503 tracks, 25 genres, 5 media types, 8 employees) and values made
// deterministically from the row number, so every run reads the same rows.
// Like postgrest-benchmark's database it has no row level security: the anon
// role reads and writes these tables through its default grants.
import { isDeepStrictEqual } from 'node:util'
import pg from 'pg'
import type { RequestIdentity } from '../../lib/roles.ts'
import type { RoleTimeouts } from '../../lib/plans.ts'
import type { Caller, HttpCall, Origins } from './rest-cases.ts'
import { preparedLimit } from './rest-limit.ts'

export const CHINOOK_SIZES = { artists: 275, albums: 347, tracks: 3503, genres: 25, mediaTypes: 5, employees: 8 }

/** The artist whose albums the embedded read asks for; in Chinook it has three, as here. */
export const EMBED_ARTIST = 127
/** The artist of the single-row read. */
export const SINGLE_ARTIST = 3

export function chinookSql(): string {
  const { artists, albums, tracks, genres, mediaTypes, employees } = CHINOOK_SIZES
  return `
    create table artist (artist_id serial primary key, name varchar(120));
    create table genre (genre_id serial primary key, name varchar(120));
    create table media_type (media_type_id serial primary key, name varchar(120));
    create table album (album_id serial primary key, title varchar(160) not null, artist_id int not null references artist (artist_id));
    create index ifk_album_artist_id on album (artist_id);
    create table track (
      track_id serial primary key, name varchar(200) not null, album_id int references album (album_id),
      media_type_id int not null references media_type (media_type_id), genre_id int references genre (genre_id),
      composer varchar(220), milliseconds int not null, bytes int, unit_price numeric(10,2) not null
    );
    create index ifk_track_album_id on track (album_id);
    create index ifk_track_genre_id on track (genre_id);
    create index ifk_track_media_type_id on track (media_type_id);
    -- postgrest-benchmark's employee table has no indexes and constraints but its key.
    create table employee (
      employee_id serial primary key, last_name varchar(20) not null, first_name varchar(20) not null, title varchar(30),
      reports_to int, birth_date timestamp, hire_date timestamp, address varchar(70), city varchar(40), state varchar(40),
      country varchar(40), postal_code varchar(10), phone varchar(24), fax varchar(24), email varchar(60)
    );

    insert into artist (name) select 'Artist ' || g from generate_series(1, ${artists}) g;
    insert into genre (name) select 'Genre ' || g from generate_series(1, ${genres}) g;
    insert into media_type (name) select 'Media type ' || g from generate_series(1, ${mediaTypes}) g;
    -- An album for each artist, then the rest: two more for artist ${EMBED_ARTIST}, the others spread.
    insert into album (title, artist_id)
      select 'Album ' || g, case when g <= ${artists} then g when g <= ${artists + 2} then ${EMBED_ARTIST} else 1 + (g * 7) % ${artists} end
        from generate_series(1, ${albums}) g;
    -- About ten tracks an album, every fifth without a composer, as Chinook's.
    insert into track (name, album_id, media_type_id, genre_id, composer, milliseconds, bytes, unit_price)
      select 'Track ' || g, 1 + (g - 1) % ${albums}, 1 + g % ${mediaTypes}, 1 + g % ${genres},
             case when g % 5 = 0 then null else 'Composer ' || (1 + g % 97) end,
             180000 + (g * 7919) % 240000, (180000 + (g * 7919) % 240000) * 33, case when g % ${mediaTypes} = 2 then 1.99 else 0.99 end
        from generate_series(1, ${tracks}) g;
    insert into employee (last_name, first_name, title, reports_to, birth_date, hire_date, address, city, state, country, postal_code, phone, fax, email)
      select 'Last ' || g, 'First ' || g, case when g = 1 then 'General Manager' else 'Sales Support Agent' end, case when g = 1 then null else 1 end,
             timestamp '1960-01-01' + g * interval '400 days', timestamp '2002-04-01' + g * interval '30 days', g || ' Street SW', 'Calgary', 'AB',
             'Canada', 'T2P 2T3', '+1 (403) 262-3443', '+1 (403) 262-3322', 'employee' || g || '@chinookcorp.com'
        from generate_series(1, ${employees}) g;
    analyze;
  `
}

/**
 * writes/singleObject.js's row, but for the address: the probes' rows carry a marker
 * there so each is found again (the load's rows all carry the same).
 */
export function employeeRow(marker: string): Record<string, string | number> {
  return {
    first_name: 'Virtual 1', last_name: 'User 1', title: 'Load Tester', reports_to: 1, birth_date: '1920-01-01', hire_date: '2020-01-01',
    address: marker.slice(0, 70), city: 'Calgary', state: 'AB', country: 'Canada', postal_code: 'T2P 5G', phone: '(403) 246-9887',
    fax: '+1 (403) 246-9899', email: 'vu1@chinookcorp.com',
  }
}

/** What the reads must answer, as the owner builds it with PostgreSQL's own JSON (numeric unit_price as a JSON number, as PostgREST sends it). */
export interface ChinookExpected {
  single: unknown
  embedded: unknown
}

/** Albums by id and each album's tracks by id: PostgREST leaves an embedding's order to the plan, so answers are compared in this order. */
export function byIds(albums: unknown): unknown {
  if (!Array.isArray(albums)) return albums
  const id = (key: string) => (a: Record<string, number>, b: Record<string, number>) => a[key]! - b[key]!
  return (albums as Record<string, unknown>[])
    .map((album) => ({ ...album, track: Array.isArray(album.track) ? [...(album.track as Record<string, number>[])].sort(id('track_id')) : album.track }))
    .sort(id('album_id') as never)
}

/** The statements that build each read's whole answer (shared by the expected answers and the plain pg limit) and make the insert. */
export const CHINOOK_STATEMENTS = {
  single: { prepare: '(int) as select coalesce(json_agg(t), \'[]\') as body from (select * from artist where artist_id = $1) t', args: `(${SINGLE_ARTIST})` },
  embedded: {
    prepare: `(int) as
      select coalesce(json_agg(t), '[]') as body from (
        select a.*, (select coalesce(json_agg(tr), '[]') from (
                       select k.*, (select row_to_json(g) from genre g where g.genre_id = k.genre_id) as genre from track k where k.album_id = a.album_id
                     ) tr) as track
          from album a where a.artist_id = $1
      ) t`,
    args: `(${EMBED_ARTIST})`,
  },
  insert: {
    prepare: `(json) as insert into employee (first_name, last_name, title, reports_to, birth_date, hire_date, address, city, state, country, postal_code, phone, fax, email)
      select first_name, last_name, title, reports_to, birth_date, hire_date, address, city, state, country, postal_code, phone, fax, email from json_populate_record(null::employee, $1)`,
  },
} as const

/** Runs a read's statement as the owner: prepared, executed and let go, on the owner's connection. */
async function ownerRead(owner: pg.ClientBase, statement: { prepare: string; args: string }): Promise<unknown> {
  await owner.query(`prepare bench_chinook_expected${statement.prepare}`)
  try {
    return (await owner.query<{ body: unknown }>(`execute bench_chinook_expected${statement.args}`)).rows[0]!.body
  } finally {
    await owner.query('deallocate bench_chinook_expected')
  }
}

export async function chinookExpected(owner: pg.ClientBase): Promise<ChinookExpected> {
  return { single: await ownerRead(owner, CHINOOK_STATEMENTS.single), embedded: byIds(await ownerRead(owner, CHINOOK_STATEMENTS.embedded)) }
}

/** Whether exactly one employee row with the probe's marker was written, as the benchmark's row. */
export async function employeeInsertedOnce(owner: pg.ClientBase, marker: string): Promise<string | undefined> {
  const { rows } = await owner.query<{ title: string; email: string }>('select title, email from employee where address = $1', [marker.slice(0, 70)])
  if (rows.length !== 1) return `${rows.length} employees written, 1 expected`
  if (rows[0]!.title !== 'Load Tester' || rows[0]!.email !== 'vu1@chinookcorp.com') return `the employee was written as ${JSON.stringify(rows[0])}`
  return undefined
}

/** bench:rest's names of PostgREST's three workloads. */
export const CHINOOK_CASES = ['chinook single-row read', 'chinook embedded read', 'chinook single-row insert'] as const
export type ChinookCase = (typeof CHINOOK_CASES)[number]

/** A request and how its 2xx answer is read back (an insert: that its body is empty, PostgREST's default return=minimal). */
export interface ChinookRequest {
  origin: string
  call: HttpCall
  /** The status a right answer has. */
  status: number
  read(body: string): unknown
}

/**
 * The request of postgrest-benchmark's k6 script, as it sends it: no Prefer header (the insert's answer
 * is PostgREST's default, 201 with no body), the apikey and bearer a Baseplane client must add.
 */
export function chinookRequest(name: ChinookCase, caller: Caller, origins: Origins, marker: string): ChinookRequest {
  const rest = `${origins.basePath}/rest/v1`
  const auth = { apikey: caller.anonKey, authorization: `Bearer ${caller.token}` }
  if (name === 'chinook single-row insert') {
    return {
      origin: origins.platform,
      call: { method: 'POST', path: `${rest}/employee`, headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(employeeRow(marker)) },
      status: 201,
      read: (body) => {
        if (body !== '') throw new Error(`a body without Prefer: return=representation: ${body.slice(0, 200)}`)
        return 'inserted'
      },
    }
  }
  const path = name === 'chinook single-row read' ? `/artist?select=*&artist_id=eq.${SINGLE_ARTIST}` : `/album?select=*,track(*,genre(*))&artist_id=eq.${EMBED_ARTIST}`
  return { origin: origins.platform, call: { method: 'GET', path: `${rest}${path}`, headers: auth }, status: 200, read: (body) => JSON.parse(body) as unknown }
}

/** The case's limit: its statement run with plain pg as the caller (bench/lib/rest-limit.ts); resolves to its answer, read as REST's is. */
export function chinookLimit(pool: pg.Pool, name: ChinookCase, identity: RequestIdentity, timeouts: RoleTimeouts, marker: string): () => Promise<unknown> {
  const statement = `bench_rest_${name.replace(/\W/g, '_')}_${identity.role}`
  if (name === 'chinook single-row insert') {
    const run = preparedLimit(pool, statement, CHINOOK_STATEMENTS.insert.prepare, `(${pg.escapeLiteral(JSON.stringify(employeeRow(marker)))})`, identity, timeouts)
    return async () => {
      const last = await run()
      if (last.rowCount !== 1) throw new Error(`${last.rowCount} rows inserted`)
      return 'inserted'
    }
  }
  const read = name === 'chinook single-row read' ? CHINOOK_STATEMENTS.single : CHINOOK_STATEMENTS.embedded
  const run = preparedLimit(pool, statement, read.prepare, read.args, identity, timeouts)
  return async () => ((await run()).rows[0] as { body: unknown }).body
}

/** Undefined when `got` is what the case must answer; else why not. */
export async function chinookWrongness(owner: pg.ClientBase, expected: ChinookExpected, name: ChinookCase, got: unknown, marker: string): Promise<string | undefined> {
  if (name === 'chinook single-row insert') return got === 'inserted' ? employeeInsertedOnce(owner, marker) : `answered ${JSON.stringify(got)}`
  const want = name === 'chinook single-row read' ? expected.single : expected.embedded
  const have = name === 'chinook single-row read' ? got : byIds(got)
  return isDeepStrictEqual(have, want) ? undefined : `other data than expected: ${JSON.stringify(got).slice(0, 300)}`
}
