// The SQL tab: posts the editor's text to run (or to EXPLAIN) as the chosen
// role, and draws the answer: the last statement's rows as a table with each
// column's type (a NULL marked apart from the text 'NULL'), its pages, or
// PostgreSQL's error with the line and a mark under its position. Keeps the
// caller's snippets (open, save, delete) and redraws their last runs.
// Text only goes in by textContent: nothing a result or a snippet says is
// read as HTML.
const form = document.getElementById('sql')

function el(tag, text, attrs = {}) {
  const node = document.createElement(tag)
  if (text !== undefined) node.textContent = text
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value)
  return node
}

async function call(url, body) {
  const init = body === undefined ? { credentials: 'same-origin' } : { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
  const response = await fetch(url, init)
  const json = await response.json().catch(() => ({ code: 'bad_answer', message: `The dashboard answered ${response.status}` }))
  return { ok: response.ok, status: response.status, json }
}

if (form) {
  const $ = (id) => document.getElementById(id)
  const query = $('sql-query')
  const role = $('sql-role')
  const user = $('sql-user')
  const userRow = $('sql-user-row')
  const limit = $('sql-limit')
  const readOnly = $('sql-read-only')
  const status = $('sql-status')
  const problem = $('sql-problem')
  const meta = $('sql-meta')
  const errorBox = $('sql-error')
  const plan = $('sql-plan')
  const result = $('sql-result')
  const prev = $('sql-prev')
  const next = $('sql-next')
  let last = null
  // The layout styles buttons' display, which would win over the hidden attribute alone.
  const showButton = (button, visible) => {
    button.hidden = !visible
    button.style.display = visible ? '' : 'none'
  }
  showButton(prev, false)
  showButton(next, false)

  const showUser = () => (userRow.hidden = role.value !== 'user')
  role.addEventListener('change', showUser)
  showUser()

  const say = (text, field) => {
    problem.hidden = !text
    problem.textContent = text ?? ''
    for (const input of [query, role, user, limit]) input.removeAttribute('aria-invalid')
    const named = { query, role, user, limit }[field]
    if (text && named) named.setAttribute('aria-invalid', 'true')
  }

  function drawTable(view) {
    const head = result.tHead
    const body = result.tBodies[0]
    head.replaceChildren()
    body.replaceChildren()
    const names = el('tr')
    for (const column of view.columns) {
      const th = el('th', column.name, { scope: 'col' })
      th.append(el('br'), el('small', column.type, { class: 'muted sql-type' }))
      names.append(th)
    }
    head.append(names)
    for (const row of view.rows) {
      const tr = el('tr')
      for (const value of row) {
        const td = el('td')
        if (value === null) td.append(el('span', 'NULL', { class: 'sql-null', style: 'font-style:italic;color:#8a939e' }))
        else td.textContent = typeof value === 'string' ? value : JSON.stringify(value)
        tr.append(td)
      }
      body.append(tr)
    }
    result.hidden = view.columns.length === 0
  }

  function showError(answer, text) {
    errorBox.hidden = false
    $('sql-error-code').textContent = answer.sqlstate ?? answer.code ?? ''
    $('sql-error-message').textContent = answer.message ?? ''
    $('sql-error-detail').textContent = answer.detail ?? ''
    $('sql-error-hint').textContent = answer.hint ?? ''
    const at = $('sql-error-at')
    if (typeof answer.line === 'number') {
      $('sql-error-position').textContent = `line ${answer.line}, column ${answer.column} (character ${answer.position})`
      const line = text.split('\n')[answer.line - 1] ?? ''
      const label = `LINE ${answer.line}: `
      at.textContent = `${label}${line}\n${' '.repeat(label.length + Array.from(line).slice(0, answer.column - 1).length)}^`
      at.hidden = false
    } else {
      $('sql-error-position').textContent = answer.statement ? `statement ${answer.statement}` : ''
      at.hidden = true
    }
  }

  function show(view) {
    errorBox.hidden = true
    plan.hidden = view.explain === undefined
    if (view.explain !== undefined) {
      plan.textContent = typeof view.explain.plan === 'string' ? view.explain.plan : JSON.stringify(view.explain.plan, null, 2)
      result.hidden = true
    } else drawTable(view)
    const parts = [view.command ?? 'OK']
    if (view.columns.length > 0 && view.explain === undefined) {
      const shown = view.rows.length
      parts.push(shown === 0 ? 'no rows' : `rows ${view.offset + 1}–${view.offset + shown}${view.more ? ', more' : ` of ${view.row_count ?? view.offset + shown}`}`)
    } else if (view.row_count !== null) parts.push(`${view.row_count} rows`)
    parts.push(`${view.statements} statement${view.statements === 1 ? '' : 's'}`, `${view.duration_ms} ms`, `as ${view.user ? view.user.email ?? view.user.id : view.role}`)
    if (view.read_only) parts.push('read-only')
    if (!view.committed) parts.push('rolled back')
    meta.textContent = parts.join(' · ')
    meta.dataset.rows = String(view.rows.length)
    showButton(prev, view.explain === undefined && view.offset > 0)
    showButton(next, view.explain === undefined && view.more)
  }

  async function run(body) {
    say('')
    status.textContent = 'Running…'
    const text = body.query
    const answer = await call(form.dataset.run, body)
    status.textContent = ''
    if (answer.ok) {
      last = body
      show(answer.json)
    } else if (answer.json.code === 'sql_failed') {
      last = null
      result.hidden = true
      plan.hidden = true
      showButton(prev, false)
      showButton(next, false)
      meta.textContent = `Error ${answer.json.sqlstate} in statement ${answer.json.statement}`
      showError(answer.json, text)
    } else say(answer.json.message, answer.json.field)
    await redrawHistory()
  }

  const request = (extra = {}) => ({
    query: query.value,
    role: role.value,
    ...(role.value === 'user' ? { user: user.value } : {}),
    ...(readOnly.checked ? { read_only: true } : {}),
    limit: Number(limit.value),
    ...extra,
  })

  form.addEventListener('submit', (event) => {
    event.preventDefault()
    void run(request())
  })
  $('sql-explain').addEventListener('click', () => {
    const { limit: _limit, ...rest } = request()
    void run({ ...rest, explain: $('sql-explain-json').checked ? 'json' : true, ...($('sql-analyze').checked ? { analyze: true } : {}) })
  })
  // Another page runs the text again, read-only: a write is not repeated.
  const page = (step) => {
    if (!last) return
    const offset = Math.max(0, (last.offset ?? 0) + step * last.limit)
    void run({ ...last, offset, read_only: true })
  }
  prev.addEventListener('click', () => page(-1))
  next.addEventListener('click', () => page(1))

  function cellTable(head, rows) {
    const tableNode = el('table', undefined, { class: 'stacked' })
    const tr = el('tr')
    for (const name of head) tr.append(el('th', name, { scope: 'col' }))
    tableNode.append(el('thead'), el('tbody'))
    tableNode.tHead.append(tr)
    for (const row of rows) tableNode.tBodies[0].append(row)
    return tableNode
  }

  const clip = (text) => (text.length > 120 ? `${text.slice(0, 120)}…` : text)

  async function redrawHistory() {
    const answer = await call(form.dataset.history)
    if (!answer.ok) return
    const rows = answer.json.runs.map((run) => {
      const tr = el('tr')
      tr.append(
        el('td', run.at.replace('T', ' ').slice(0, 19)),
        el('td', `${run.role}${run.explain ? ' (explain)' : ''}${run.read_only ? ' (read-only)' : ''}`),
        el('td', `${run.duration_ms} ms`),
        el('td', run.error_code === null ? `${run.row_count ?? '?'} rows` : `error ${run.error_code}`),
      )
      const sql = el('td')
      sql.append(el('code', clip(run.query)))
      tr.append(sql)
      return tr
    })
    $('sql-history').replaceChildren(rows.length === 0 ? el('p', 'No runs yet.', { class: 'empty' }) : cellTable(['when (UTC)', 'as', 'took', 'answer', 'SQL'], rows))
  }

  let snippets = []
  const snippetProblem = $('sql-snippet-problem')
  const saySnippet = (text) => {
    snippetProblem.hidden = !text
    snippetProblem.textContent = text ?? ''
  }

  async function redrawSnippets() {
    const answer = await call(`${form.dataset.snippets}.json`)
    if (!answer.ok) return
    snippets = answer.json.snippets
    const rows = snippets.map((s) => {
      const tr = el('tr', undefined, { 'data-id': s.id })
      const sql = el('td')
      sql.append(el('code', clip(s.query)))
      const actions = el('td')
      actions.append(el('button', 'Open', { type: 'button', class: 'secondary', 'data-load': s.id }), ' ', el('button', "Save the editor's text here", { type: 'button', class: 'secondary', 'data-save': s.id }), ' ', el('button', 'Delete', { type: 'button', class: 'secondary', 'data-delete': s.id }))
      tr.append(el('td', s.name), sql, actions)
      return tr
    })
    $('sql-snippets').replaceChildren(rows.length === 0 ? el('p', 'No snippets saved yet.', { class: 'empty' }) : cellTable(['name', 'SQL', ''], rows))
  }

  $('sql-snippets').addEventListener('click', async (event) => {
    const button = event.target.closest('button')
    if (!button) return
    saySnippet('')
    if (button.dataset.load) {
      const snippet = snippets.find((s) => s.id === button.dataset.load)
      if (snippet) query.value = snippet.query
      return
    }
    let answer
    if (button.dataset.save) answer = await call(`${form.dataset.snippets}/${button.dataset.save}`, { query: query.value })
    else if (button.dataset.delete) {
      const snippet = snippets.find((s) => s.id === button.dataset.delete)
      if (!window.confirm(`Delete the snippet ${snippet ? snippet.name : ''}?`)) return
      answer = await call(`${form.dataset.snippets}/${button.dataset.delete}/delete`, {})
    }
    if (answer && !answer.ok) saySnippet(answer.json.message)
    await redrawSnippets()
  })

  $('sql-snippet-save').addEventListener('click', async () => {
    saySnippet('')
    const answer = await call(form.dataset.snippets, { name: $('sql-snippet-name').value, query: query.value })
    if (!answer.ok) return saySnippet(answer.json.message)
    $('sql-snippet-name').value = ''
    await redrawSnippets()
  })

  void redrawSnippets()
}
