// What supabase-js offers and Baseplane does not serve (issue 28 item 11):
// Edge Functions answer 404
// service_not_offered with a sentence naming what is served, through the
// calls an app makes; an unknown path stays a plain not_found. The Data API
// (/rest/v1) is served since issue 29 (test/rest/), Storage since issue 39 (test/storage/).
import t from 'tap'
import { authFixture } from '../auth/helpers.ts'
import { request } from '../helpers/http.ts'

const SERVED = 'a project serves auth (/auth/v1), graphql (/graphql/v1), push (/push/v1), realtime (/realtime/v1), rest (/rest/v1) and storage (/storage/v1)'

t.test('the services Baseplane does not serve say so', async (t) => {
  const f = await authFixture(t)
  const supabase = f.anon()
  // The Data API is served: a table that does not exist is PostgREST's own 404.
  const from = await supabase.from('notes').select('*').eq('done', false)
  t.equal(from.status, 404)
  t.same(from.data, null)
  t.match(from.error, { code: 'PGRST205', message: "Could not find the table 'public.notes' in the schema cache" })
  const rpc = await supabase.rpc('add', { a: 1, b: 2 })
  t.match(rpc.error, { code: 'PGRST202' })
  const invoked = await supabase.functions.invoke('hello', { body: {} })
  t.ok(invoked.error, 'functions.invoke reports an error')
  t.match(await invoked.error.context.json(), { code: 'service_not_offered', message: `Baseplane does not serve Edge Functions (supabase.functions.invoke()) at /functions/v1; ${SERVED}` })
  const headers = { apikey: f.project.anonKey }
  // Storage is served: anon sees no bucket without a policy.
  const storage = await supabase.storage.listBuckets()
  t.same({ data: storage.data, error: storage.error }, { data: [], error: null })
  // Realtime's HTTP API is served (test/realtime/http-api.test.ts): an empty batch is its own 422.
  const realtime = await request<{ message: string }>(`${f.project.baseUrl}/realtime/v1/api/broadcast`, { headers, body: {} })
  t.same({ status: realtime.status, message: realtime.json.message }, { status: 422, message: 'messages must be a list of one or more messages' })
  const unknown = await request<{ code: string; message: string }>(`${f.project.baseUrl}/restful/v1/notes`, { headers })
  t.same({ status: unknown.status, body: unknown.json }, { status: 404, body: { code: 'not_found', message: 'No route for /restful/v1/notes' } })
})
