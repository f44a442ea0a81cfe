// bench:rest's cases as each HTTP side asks them, and how each side's answer
// is read back into one form (rest-data.ts's rows) to be checked against what
// the pages must hold:
// - Baseplane REST, as @supabase/postgrest-js sends it (query string built by
//   URLSearchParams, apikey and Authorization headers);
// - Baseplane GraphQL, pg_graphql's schema (postsCollection, commentsCollection,
//   insertIntocommentsCollection);
// - PostGraphile v5, Amber preset (allPosts with a condition, createComment).
import { INSERT_POST_ID, PAGE, type EmbeddedPost, type PostRow } from './rest-data.ts'

export const CASES = ['filtered page', 'embedded page', 'insert'] as const
export type CaseName = (typeof CASES)[number]
export const HTTP_SIDES = ['rest', 'postgraphile', 'graphql'] as const
export type HttpSideName = (typeof HTTP_SIDES)[number]

/** Who asks: the anon key alone, or the anon key and a signed-in user's access token. */
export interface Caller {
  name: 'anon' | 'user'
  anonKey: string
  /** The bearer token: the anon key, or the user's access token. */
  token: string
  /** auth.uid() for this caller. */
  userId: string | null
}

export interface HttpCall {
  method: 'GET' | 'POST'
  /** Path and query, from the side's origin. */
  path: string
  headers: Record<string, string>
  body?: string
}

/** Where each side listens: Baseplane's project base path (/project/<ref>) on the platform, PostGraphile's own origin. */
export interface Origins {
  platform: string
  basePath: string
  postgraphile: string
}

/** What an answer holds once read: a page's rows, or that one row was inserted. */
export type Answer = PostRow[] | EmbeddedPost[] | 'inserted'

export interface CaseRequest {
  origin: string
  call: HttpCall
  /** Reads a 2xx answer's body; throws, saying why, when it is not the expected shape. */
  read(body: string): Answer
}

const pageQuery = { published: 'eq.true', order: 'id.desc', limit: String(PAGE) }

const GRAPHQL_POSTS = `postsCollection(filter: {published: {eq: true}}, first: ${PAGE}, orderBy: [{id: DescNullsLast}])`
const POSTGRAPHILE_POSTS = `allPosts(condition: {published: true}, first: ${PAGE}, orderBy: PRIMARY_KEY_DESC)`

function byId(comments: [number, string][]): [number, string][] {
  return [...comments].sort((a, b) => a[0] - b[0])
}

/** The `data` of a GraphQL answer; throws on `errors`. */
function graphqlData(body: string): Record<string, unknown> {
  const answer = JSON.parse(body) as { data?: Record<string, unknown>; errors?: { message: string }[] }
  if (answer.errors?.length) throw new Error(`errors: ${answer.errors.map((e) => e.message).join('; ')}`)
  if (!answer.data) throw new Error('no data')
  return answer.data
}

type Edges<T> = { edges: { node: T }[] }
const nodes = <T>(connection: unknown): T[] => (connection as Edges<T>).edges.map((edge) => edge.node)

export function caseRequest(side: HttpSideName, name: CaseName, caller: Caller, origins: Origins, marker: string): CaseRequest {
  const auth = { apikey: caller.anonKey, authorization: `Bearer ${caller.token}` }
  const json = { ...auth, 'content-type': 'application/json' }
  const graphql = (origin: string, path: string, query: string, read: (data: Record<string, unknown>) => Answer): CaseRequest => ({
    origin,
    call: { method: 'POST', path, headers: json, body: JSON.stringify({ query }) },
    read: (body) => read(graphqlData(body)),
  })

  if (side === 'rest') {
    const rest = `${origins.basePath}/rest/v1`
    if (name === 'insert') {
      return {
        origin: origins.platform,
        call: { method: 'POST', path: `${rest}/comments`, headers: { ...json, prefer: 'return=minimal' }, body: JSON.stringify({ post_id: INSERT_POST_ID, body: marker }) },
        read: (body) => {
          if (body !== '') throw new Error(`a body with return=minimal: ${body.slice(0, 200)}`)
          return 'inserted'
        },
      }
    }
    const select = name === 'filtered page' ? 'id,title,author_id' : 'id,title,author:authors(name),comments(id,body)'
    return {
      origin: origins.platform,
      call: { method: 'GET', path: `${rest}/posts?${new URLSearchParams({ select, ...pageQuery })}`, headers: auth },
      read: (body) => {
        const rows = JSON.parse(body) as (PostRow & { author: { name: string }; comments: { id: number; body: string }[] })[]
        if (name === 'filtered page') return rows.map(({ id, title, author_id }) => ({ id, title, author_id }))
        return rows.map((r) => ({ id: r.id, title: r.title, author: r.author.name, comments: byId(r.comments.map((c) => [c.id, c.body])) }))
      },
    }
  }

  if (side === 'graphql') {
    const path = `${origins.basePath}/graphql/v1`
    if (name === 'insert') {
      return graphql(origins.platform, path, `mutation { insertIntocommentsCollection(objects: [{post_id: ${INSERT_POST_ID}, body: ${JSON.stringify(marker)}}]) { affectedCount } }`, (data) => {
        const count = (data.insertIntocommentsCollection as { affectedCount: number }).affectedCount
        if (count !== 1) throw new Error(`affectedCount ${count}`)
        return 'inserted'
      })
    }
    if (name === 'filtered page') {
      return graphql(origins.platform, path, `{ ${GRAPHQL_POSTS} { edges { node { id title author_id } } } }`, (data) =>
        nodes<PostRow>(data.postsCollection).map(({ id, title, author_id }) => ({ id, title, author_id })),
      )
    }
    return graphql(origins.platform, path, `{ ${GRAPHQL_POSTS} { edges { node { id title authors { name } commentsCollection { edges { node { id body } } } } } } }`, (data) =>
      nodes<{ id: number; title: string; authors: { name: string }; commentsCollection: unknown }>(data.postsCollection).map((p) => ({
        id: p.id,
        title: p.title,
        author: p.authors.name,
        comments: byId(nodes<{ id: number; body: string }>(p.commentsCollection).map((c) => [c.id, c.body])),
      })),
    )
  }

  // PostGraphile v5 names the primary key column rowId (id is the global Node ID).
  if (name === 'insert') {
    return graphql(origins.postgraphile, '/graphql', `mutation { createComment(input: {comment: {postId: ${INSERT_POST_ID}, body: ${JSON.stringify(marker)}}}) { clientMutationId } }`, (data) => {
      if (data.createComment === null || typeof data.createComment !== 'object') throw new Error('no createComment payload')
      return 'inserted'
    })
  }
  if (name === 'filtered page') {
    return graphql(origins.postgraphile, '/graphql', `{ ${POSTGRAPHILE_POSTS} { edges { node { rowId title authorId } } } }`, (data) =>
      nodes<{ rowId: number; title: string; authorId: number }>(data.allPosts).map((p) => ({ id: p.rowId, title: p.title, author_id: p.authorId })),
    )
  }
  return graphql(
    origins.postgraphile,
    '/graphql',
    `{ ${POSTGRAPHILE_POSTS} { edges { node { rowId title authorByAuthorId { name } commentsByPostId { edges { node { rowId body } } } } } } }`,
    (data) =>
      nodes<{ rowId: number; title: string; authorByAuthorId: { name: string }; commentsByPostId: unknown }>(data.allPosts).map((p) => ({
        id: p.rowId,
        title: p.title,
        author: p.authorByAuthorId.name,
        comments: byId(nodes<{ rowId: number; body: string }>(p.commentsByPostId).map((c) => [c.rowId, c.body])),
      })),
  )
}
