// The Realtime tab's inspector: asks the dashboard for the socket's URL and the
// chosen caller's token, then joins the channel over Realtime's own protocol
// (vsn 1.0.0, JSON objects), as an app's client would, and lists every message
// the channel is sent. Heartbeats keep the socket open while the page is.
const form = document.getElementById('rt-form')

async function call(url, init) {
  const response = await fetch(url, { ...init, credentials: 'same-origin' })
  const json = await response.json().catch(() => ({ code: 'bad_answer', message: `The dashboard answered ${response.status}` }))
  return { ok: response.ok, json }
}

if (form) {
  const $ = (id) => document.getElementById(id)
  const role = $('rt-role')
  const userRow = $('rt-user-row')
  const problem = $('rt-problem')
  const status = $('rt-status')
  const log = $('rt-log')
  const join = $('rt-join')
  const leave = $('rt-leave')
  let socket
  let heartbeat
  let ref = 0

  role.addEventListener('change', () => (userRow.hidden = role.value !== 'user'))
  const say = (text) => {
    problem.hidden = !text
    problem.textContent = text ?? ''
  }
  const note = (event, payload) => {
    const item = document.createElement('li')
    item.dataset.event = event
    const name = document.createElement('strong')
    name.textContent = event
    const body = document.createElement('code')
    body.textContent = JSON.stringify(payload)
    item.append(new Date().toLocaleTimeString(), ' ', name, ' ', body)
    log.prepend(item)
  }
  const close = (why) => {
    clearInterval(heartbeat)
    if (socket) socket.onclose = null
    socket?.close()
    socket = undefined
    join.disabled = false
    leave.disabled = true
    status.textContent = why
  }

  leave.addEventListener('click', () => close('Left'))
  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    say('')
    close('Joining…')
    join.disabled = true
    const asked = await call(`/dashboard/projects/${form.dataset.ref}/realtime/inspector`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ role: role.value, user: $('rt-user').value }),
    })
    if (!asked.ok) {
      join.disabled = false
      status.textContent = 'Not joined'
      return say(asked.json.message)
    }
    const topic = `realtime:${$('rt-topic').value.trim()}`
    const [schema, table] = $('rt-table').value.includes('.') ? $('rt-table').value.trim().split('.', 2) : ['public', $('rt-table').value.trim()]
    // The join's ref is its own: a join tried again on a new socket is answered under the ref it sent.
    const joinRef = String(++ref)
    const send = (event, payload, asRef) => socket.send(JSON.stringify({ topic, event, payload, ref: asRef ?? String(++ref), join_ref: joinRef }))
    socket = new WebSocket(asked.json.url)
    socket.onopen = () => {
      const config = {
        broadcast: { self: true },
        presence: { enabled: true },
        postgres_changes: table ? [{ event: '*', schema, table }] : [],
        private: $('rt-private').checked,
      }
      send('phx_join', { config, ...(asked.json.token ? { access_token: asked.json.token } : {}) }, joinRef)
      heartbeat = setInterval(() => socket?.send(JSON.stringify({ topic: 'phoenix', event: 'heartbeat', payload: {}, ref: String(++ref) })), 25000)
    }
    socket.onmessage = (message) => {
      const frame = JSON.parse(message.data)
      if (frame.topic === 'phoenix') return
      if (frame.event === 'phx_reply' && frame.ref === joinRef) {
        const ok = frame.payload.status === 'ok'
        status.textContent = ok ? `Joined ${topic} as ${role.value}` : `Refused: ${frame.payload.response.reason}`
        leave.disabled = !ok
        if (!ok) close(`Refused: ${frame.payload.response.reason}`)
        return
      }
      note(frame.event, frame.payload)
    }
    socket.onclose = (closed) => close(`Closed (${closed.code}${closed.reason ? `: ${closed.reason}` : ''})`)
  })
}
