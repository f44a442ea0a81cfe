// The REST tab: sends a request on the project's data API through the
// dashboard (which adds the chosen role's key or a user's token and hands it
// to the data plane), asks before a write as service_role, and shows the
// answer: status, Content-Range, the body pretty-printed, and PostgREST's
// error by its parts. Lists the tables, views and functions to pick from.
// Text only goes in by textContent: nothing an answer or a name says is read
// as HTML.
const form = document.getElementById('rest')

function el(tag, text, attrs = {}) {
  const node = document.createElement(tag)
  if (text !== undefined) node.textContent = text
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value)
  return node
}

async function call(url, init) {
  const response = await fetch(url, { ...init, credentials: 'same-origin' })
  const json = await response.json().catch(() => ({ code: 'bad_answer', message: `The dashboard answered ${response.status}` }))
  return { ok: response.ok, json }
}

if (form) {
  const $ = (id) => document.getElementById(id)
  const method = $('rest-method')
  const path = $('rest-path')
  const body = $('rest-body')
  const bodyRow = $('rest-body-row')
  const role = $('rest-role')
  const userRow = $('rest-user-row')
  const problem = $('rest-problem')
  const status = $('rest-status')
  const meta = $('rest-meta')
  const errorBox = $('rest-error')
  const answer = $('rest-answer')
  // Drawn only when the project exposes several schemas: sent as Accept-Profile / Content-Profile.
  const profile = $('rest-profile')
  const fields = { method, path, body, role, user: $('rest-user') }

  const showUser = () => (userRow.hidden = role.value !== 'user')
  const showBody = () => (bodyRow.hidden = method.value !== 'POST' && method.value !== 'PATCH')
  role.addEventListener('change', showUser)
  method.addEventListener('change', showBody)
  showUser()
  showBody()

  // A refusal shows beside the form, and the field it names is marked.
  const say = (text, field) => {
    problem.hidden = !text
    problem.textContent = text ?? ''
    for (const [name, input] of Object.entries(fields)) {
      if (text && name === field) {
        input.setAttribute('aria-invalid', 'true')
        input.setAttribute('aria-describedby', 'rest-problem')
      } else if (input.getAttribute('aria-invalid')) {
        input.removeAttribute('aria-invalid')
        if (input.getAttribute('aria-describedby') === 'rest-problem') input.removeAttribute('aria-describedby')
      }
    }
  }

  function show(result) {
    const range = result.headers['content-range']
    const parts = [`HTTP ${result.status}`, `Content-Range ${range ?? 'none'}`]
    if (result.headers.location) parts.push(`Location ${result.headers.location}`)
    if (result.headers['preference-applied']) parts.push(`Preference-Applied ${result.headers['preference-applied']}`)
    parts.push(`${result.ms} ms`)
    meta.textContent = parts.join(' · ')
    $('rest-sent').textContent = result.sent
    meta.dataset.status = String(result.status)
    meta.dataset.range = range ?? ''
    // PostgREST's error body: {code, message, details, hint}.
    const failed = result.status >= 400 && result.json && result.body && typeof result.body === 'object' && typeof result.body.message === 'string'
    errorBox.hidden = !failed
    for (const part of ['code', 'message', 'details', 'hint']) $(`rest-error-${part}`).textContent = failed ? String(result.body[part] ?? '') : ''
    if (result.body === '') answer.textContent = '(no body)'
    else answer.textContent = result.json ? JSON.stringify(result.body, null, 2) : String(result.body)
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    say('')
    const writes = method.value !== 'GET'
    if (writes && !bodyRow.hidden && body.value.trim() !== '') {
      try {
        JSON.parse(body.value)
      } catch (error) {
        say(`The body is not JSON: ${error.message}`, 'body')
        return
      }
    }
    // service_role bypasses row-level security: a write is sent only once the operator says so.
    if (role.value === 'service_role' && writes && !window.confirm(form.dataset.confirmWrite)) {
      status.textContent = 'Not sent.'
      return
    }
    status.textContent = 'Sending…'
    const prefer = [...form.querySelectorAll('input[name=prefer]:checked')].map((box) => box.value)
    const { ok, json } = await call(form.dataset.run, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        method: method.value,
        path: path.value,
        prefer,
        body: bodyRow.hidden ? undefined : body.value,
        role: role.value,
        user: fields.user.value,
        profile: profile ? profile.value : undefined,
        confirmed: role.value === 'service_role' && writes,
      }),
    })
    status.textContent = ''
    if (!ok) {
      say(json.message, json.field)
      return
    }
    show(json)
  })

  const relations = $('rest-relations')
  const functions = $('rest-functions')
  const paths = $('rest-paths')

  function pick(chosen, text, json, schema) {
    method.value = chosen
    path.value = text
    if (profile && schema) profile.value = schema
    if (json !== undefined) body.value = json
    showBody()
    say('')
    path.focus()
  }

  function item(list, label, title, onClick) {
    const button = el('button', label, { type: 'button', class: 'secondary', 'aria-label': title })
    button.style.margin = '.1rem 0'
    button.addEventListener('click', onClick)
    const li = el('li')
    li.append(button)
    list.append(li)
  }

  async function loadSchema() {
    const { ok, json } = await call(form.dataset.schema, { method: 'GET' })
    relations.replaceChildren()
    functions.replaceChildren()
    paths.replaceChildren()
    relations.setAttribute('aria-busy', 'false')
    if (!ok) {
      relations.append(el('li', json.message))
      return
    }
    $('rest-schema-note').textContent = `Read by the platform from the database's catalogue (exposed schemas: ${json.schemas.join(', ') || 'none'}), not as the role you run as: its grants and row-level security still decide what it may read or write.`
    if (json.relations.length === 0) relations.append(el('li', 'No tables or views yet: create one (baseplane db url gives the connection string) and load this page again.', { id: 'rest-relations-none' }))
    // With several schemas exposed, a name says its schema (the pick chooses it as the profile).
    const named = (x) => (json.schemas.length > 1 ? `${x.schema}.${x.name}` : x.name)
    for (const r of json.relations) {
      const columns = r.columns.map((c) => `${c.name} ${c.type}`).join(', ')
      item(relations, named(r), `Read ${r.kind} ${named(r)}`, () => pick('GET', `${r.name}?select=*&limit=10`, undefined, r.schema))
      relations.lastChild.firstChild.title = `${r.kind} ${r.schema}.${r.name}${r.rls ? ' (row-level security on)' : ''}: ${columns}`
      paths.append(el('option', undefined, { value: r.name }))
    }
    if (json.functions.length === 0) functions.append(el('li', 'No functions.', { id: 'rest-functions-none' }))
    for (const f of json.functions) {
      const args = Object.fromEntries(f.args.filter((a) => a.name).map((a) => [a.name, null]))
      item(functions, `rpc/${f.name}`, `Call function ${named(f)}`, () => pick('POST', `rpc/${f.name}`, JSON.stringify(args, null, 2), f.schema))
      functions.lastChild.firstChild.title = `${f.schema}.${f.name}(${f.args.map((a) => `${a.name} ${a.type}${a.optional ? ' = default' : ''}`).join(', ')}) returns ${f.returnsSet ? 'setof ' : ''}${f.returns}${f.readOnly ? '' : ' (volatile: POST only)'}`
      paths.append(el('option', undefined, { value: `rpc/${f.name}` }))
    }
  }
  loadSchema()
}
