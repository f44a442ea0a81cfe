// Realtime's WebSocket until Realtime is served (issue 37 item 8): the
// unmodified supabase-js channel().subscribe(cb) is told why, not "transport
// failure": the upgrade is accepted and closed with 4000 + the status of what
// the data plane answers the path (4404 service_not_offered; 4401 for a wrong
// key), which realtime-js hands cb as CHANNEL_ERROR "socket closed: <code>
// (<reason>)". On both HTTP engines (node:http is a second node on the same
// catalogue), through the /project/<ref> prefix and the Host's first label; a
// GET that is not an upgrade still answers 404 service_not_offered.
import http from 'node:http'
import { createClient } from '@supabase/supabase-js'
import t from 'tap'
import { request } from '../helpers/http.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const fixture = await startTestPlatform(t, { BASEPLANE_HTTP_ENGINE: 'uws' })
const project = await fixture.createProject({ name: 'Realtime soon' })
const NOT_OFFERED = 'socket closed: 4404 (service_not_offered: Baseplane does not serve Realtime (supabase.channel()) at /realtime/v1)'

/** The first status (and error) `channel().subscribe(cb)` reports, the client's reconnection stopped after it. */
async function firstSubscribeReport(baseUrl: string, key: string): Promise<{ status: string; message: string | undefined }> {
  const supabase = createClient(baseUrl, key, { auth: { persistSession: false, autoRefreshToken: false } })
  try {
    return await new Promise((resolve) => {
      supabase.channel('room-1').subscribe((status, error) => resolve({ status, message: error?.message }))
    })
  } finally {
    await supabase.removeAllChannels()
    supabase.realtime.disconnect()
  }
}

/** A raw upgrade with the given Host: the status line and the close frame the server sends (code and reason). */
function rawUpgrade(port: number, path: string, host: string): Promise<{ status: number; code: number; reason: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port,
      path,
      headers: { host, connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' },
    })
    req.on('upgrade', (res, socket, head: Buffer) => {
      // The close frame may come in the handshake's packet (head) or after it.
      let frame = head
      const read = () => {
        if (frame.length < 2 || frame.length < 2 + frame[1]!) return
        socket.destroy()
        resolve({ status: res.statusCode!, code: frame.readUInt16BE(2), reason: frame.subarray(4, 2 + frame[1]!).toString() })
      }
      socket.on('data', (chunk: Buffer) => {
        frame = Buffer.concat([frame, chunk])
        read()
      })
      read()
    })
    req.on('response', (res) => reject(new Error(`answered ${res.statusCode} instead of upgrading`)))
    req.on('error', reject)
    req.end()
  })
}

for (const engine of ['uws', 'node'] as const) {
  t.test(`${engine} engine: supabase.channel().subscribe() is told Realtime is not served, and why`, async (t) => {
    const node = engine === 'uws' ? fixture.platform : await fixture.startAnotherNode({ env: { BASEPLANE_HTTP_ENGINE: 'node' } })
    t.equal(node.httpEngine.name, engine === 'uws' ? 'uWebSockets.js' : 'node:http')
    const origin = `http://127.0.0.1:${node.port}`
    const baseUrl = `${origin}/project/${project.ref}`

    t.same(await firstSubscribeReport(baseUrl, project.anonKey), { status: 'CHANNEL_ERROR', message: NOT_OFFERED }, 'the reason, not "transport failure"')
    const wrongKey = await firstSubscribeReport(baseUrl, `${project.anonKey.slice(0, -4)}AAAA`)
    t.same(wrongKey, { status: 'CHANNEL_ERROR', message: 'socket closed: 4401 (invalid_api_key: Invalid API key)' }, "the data plane's refusal, as over HTTP")

    const byHost = await rawUpgrade(node.port, '/realtime/v1/websocket?vsn=1.0.0&apikey=' + project.anonKey, `${project.ref}.localhost:${node.port}`)
    t.same(byHost, { status: 101, code: 4404, reason: NOT_OFFERED.slice('socket closed: 4404 ('.length, -1) }, 'the ref in the Host')

    const plain = await request<{ code: string; message: string }>(`${baseUrl}/realtime/v1/websocket?vsn=1.0.0`, { headers: { apikey: project.anonKey } })
    t.same([plain.status, plain.json.code], [404, 'service_not_offered'], 'a GET that is not an upgrade is answered over HTTP, as before')
    const rest = await request(`${baseUrl}/rest/v1/`, { headers: { apikey: project.anonKey, connection: 'Upgrade', upgrade: 'h2c' } })
    t.equal(rest.status, 200, 'another upgrade asked for elsewhere is a request')
  })
}
