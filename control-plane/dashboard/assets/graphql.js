// The GraphQL tab's explorer: runs the document through the dashboard (which
// adds the chosen role's key or a user's token), lists the schema's types (by
// introspection when it is on, else as the platform read them from the
// catalogue), and shows the schema report. Text only goes in by
// textContent: nothing the schema or the answer says is read as HTML.
const form = document.getElementById('explorer')

function el(tag, text, attrs = {}) {
  const node = document.createElement(tag)
  if (text !== undefined) node.textContent = text
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value)
  return node
}

async function post(url, body) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), credentials: 'same-origin' })
  const json = await response.json().catch(() => ({ code: 'bad_answer', message: `The dashboard answered ${response.status}` }))
  return { ok: response.ok, json }
}

if (form) {
  const role = document.getElementById('gql-role')
  const userRow = document.getElementById('gql-user-row')
  const problem = document.getElementById('gql-problem')
  const answer = document.getElementById('gql-answer')
  const status = document.getElementById('gql-status')
  const showUser = () => (userRow.hidden = role.value !== 'user')
  role.addEventListener('change', showUser)
  showUser()

  const say = (text) => {
    problem.hidden = !text
    problem.textContent = text ?? ''
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    say('')
    let variables
    try {
      variables = JSON.parse(document.getElementById('gql-variables').value || '{}')
    } catch (error) {
      say(`Variables are not JSON: ${error.message}`)
      return
    }
    status.textContent = 'Running…'
    const { ok, json } = await post(form.dataset.run, {
      query: document.getElementById('gql-query').value,
      variables,
      role: role.value,
      user: document.getElementById('gql-user').value,
    })
    if (!ok) {
      status.textContent = ''
      say(json.message)
      return
    }
    status.textContent = `HTTP ${json.status} in ${json.ms} ms`
    answer.textContent = typeof json.answer === 'string' ? json.answer : JSON.stringify(json.answer, null, 2)
  })

  const typeName = (t) => (t.kind === 'NON_NULL' ? `${typeName(t.ofType)}!` : t.kind === 'LIST' ? `[${typeName(t.ofType)}]` : t.name)
  const typesList = document.getElementById('gql-types')
  const typeView = document.getElementById('gql-type')

  function showType(type) {
    typeView.replaceChildren(el('h3', `${type.name} (${type.kind.toLowerCase().replace('_', ' ')})`, { id: 'gql-type-name' }))
    if (type.description) typeView.append(el('p', type.description, { class: 'muted' }))
    const members = type.fields ?? type.inputFields ?? []
    const list = el('ul')
    for (const f of members) list.append(el('li', `${f.name}: ${typeName(f.type)}`))
    for (const v of type.enumValues ?? []) list.append(el('li', v.name))
    typeView.append(list)
  }

  // The page loads the anon types at once; a later choice of role may be answered first: the last asked wins.
  let typesAsked = 0
  async function loadTypes() {
    const asked = ++typesAsked
    const role = document.getElementById('gql-types-role').value
    typesList.setAttribute('aria-busy', 'true')
    const { ok, json } = await post(form.dataset.types, { role })
    if (asked !== typesAsked) return
    typesList.dataset.role = role
    typesList.dataset.source = ok ? json.source ?? '' : ''
    typesList.setAttribute('aria-busy', 'false')
    typesList.replaceChildren()
    const note = document.getElementById('gql-types-note')
    // Introspection off: the dashboard read the types from the catalogue itself, whatever the role.
    note.textContent = ok && json.source === 'catalogue'
      ? `Read by the platform from the database's catalogue (schemas ${(json.schemas ?? []).join(', ') || 'none'}), not as ${role}: introspection is off, so the endpoint serves no __schema. Column types are PostgreSQL's.`
      : ''
    const types = ok ? (json.source === 'catalogue' ? json.types : json.answer?.data?.__schema?.types) : undefined
    if (!types) {
      if (!ok) typesList.append(el('li', json.message))
      else {
        // The sentence may end in a period of its own: one, not two.
        const said = (json.answer?.errors?.[0]?.message ?? 'no types').replace(/\.$/, '')
        typesList.append(el('li', `The endpoint answered: ${said}. Introspection is off unless the schema turns it on (see Introspection below).`, { id: 'gql-types-off' }))
      }
      return
    }
    if (types.length === 0) typesList.append(el('li', 'No tables, views or enums yet: create one (baseplane db url gives the connection string) and load the types again.', { id: 'gql-types-none' }))
    for (const type of types.filter((t) => !t.name.startsWith('__')).sort((a, b) => a.name.localeCompare(b.name))) {
      const item = el('li')
      const button = el('button', type.name, { type: 'button', class: 'secondary', 'aria-label': `Show type ${type.name}` })
      button.style.margin = '.1rem 0'
      button.addEventListener('click', () => showType(type))
      item.append(button)
      typesList.append(item)
    }
  }
  document.getElementById('gql-types-load').addEventListener('click', loadTypes)
  loadTypes()

  async function loadReport() {
    const box = document.getElementById('gql-report')
    const { ok, json } = await post(form.dataset.report, {})
    const report = ok ? json.answer?.extensions?.schemaReport : undefined
    if (!report) {
      box.replaceChildren(
        el('p', 'The schema report is off. It lists the tables and functions left out of the schema and why; turn it on in SQL:'),
        el('pre', `comment on schema public is e'@graphql({"schemaReport": {"enabled": true}})';`),
      )
      return
    }
    const rows = []
    for (const t of report.tables ?? []) {
      if (!t.inSchema) rows.push([`${t.schema}.${t.name}`, t.kind ?? 'table', t.reason])
      for (const left of t.leftOut ?? []) rows.push([`${t.schema}.${t.name}`, `${left.field ?? left.constraint}`, left.reason])
    }
    for (const f of report.functions ?? []) if (!f.inSchema) rows.push([`${f.schema}.${f.name}`, 'function', f.reason])
    const summary = el('p', `Schemas: ${(report.schemas ?? []).join(', ')}. ${(report.tables ?? []).filter((t) => t.inSchema).length} tables and ${(report.functions ?? []).filter((f) => f.inSchema).length} functions in the schema; ${rows.length} left out.`, { id: 'gql-report-summary' })
    if (rows.length === 0) {
      box.replaceChildren(summary)
      return
    }
    const table = el('table')
    const head = el('tr')
    for (const h of ['Object', 'Part', 'Why it is left out']) head.append(el('th', h, { scope: 'col' }))
    table.append(el('thead'), el('tbody'))
    table.tHead.append(head)
    for (const row of rows) {
      const tr = el('tr')
      for (const cell of row) tr.append(el('td', String(cell ?? '')))
      table.tBodies[0].append(tr)
    }
    const scroll = el('div', undefined, { class: 'scroll' })
    scroll.append(table)
    box.replaceChildren(summary, scroll)
  }
  loadReport()
}
