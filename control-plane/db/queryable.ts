// What a control-plane statement runs on: the catalogue's pool, a client
// checked out of it (inside a transaction), or a connection of its own to a
// server or a project's database.
import type pg from 'pg'

export type Queryable = Pick<pg.ClientBase, 'query'>
