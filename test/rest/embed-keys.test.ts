// Embedding by the name of a key, as PostgREST 13's `findRel` reads an
// embed's target: a foreign-key constraint's name (`alias:fk_name(*)`) or a
// foreign-key column's (`col(*)`, the referenced row); a self-referencing
// table embedded by its own name gives its children (one-to-many), its key
// column its parent; two embeds under one name are PostgreSQL's 42712, as
// PostgREST's two lateral joins of one alias are; aggregates beside a to-one
// spread inside an embed group by the spread's columns, and one inside a to-one
// spread is done by the level above it; PGRST200's "Perhaps you meant" names
// related tables, never a computed relationship's function.
import t from 'tap'
import { restProject } from './helpers.ts'

const f = await restProject(t, `
  create table clients (id int primary key, name text not null);
  create table users (id int primary key, name text not null);
  create table projects (
    id int primary key,
    name text not null,
    client_id int constraint projects_client_fkey references clients(id),
    owner_id int references users(id)
  );
  create table tasks (id int primary key, project_id int not null references projects(id), assignee_id int references users(id), hours int not null);
  create table employees (id int primary key, name text not null, manager_id int references employees(id));
  create table people (id int primary key, name text not null, mentor_id int unique references people(id));
  create table friendships (a_id int references people(id), b_id int references people(id), primary key (a_id, b_id));
  create view client_list as select id, name from clients;
  -- A computed relationship whose name is nearer to the misspelling below than any table's.
  create function clientx(projects) returns setof clients rows 1 language sql stable as $$ select * from clients where id = $1.client_id $$;
  insert into clients values (1, 'Acme'), (2, 'Bolt');
  insert into users values (1, 'Uma'), (2, 'Vic');
  insert into projects values (1, 'Apollo', 1, 1), (2, 'Gemini', 2, 2), (3, 'Mercury', null, 1);
  insert into tasks values (1, 1, 1, 3), (2, 1, 1, 5), (3, 1, 2, 2), (4, 2, 2, 7), (5, 2, null, 1);
  insert into employees values (1, 'Ada', null), (2, 'Bea', 1), (3, 'Cid', 1), (4, 'Dee', 2);
  insert into people values (1, 'Pat', null), (2, 'Quinn', 1);
  insert into friendships values (1, 2);
  grant select on all tables in schema public to anon;
`, undefined, { BASEPLANE_REST_AGGREGATES: 'true' })
const s = f.anon()

t.test('by constraint name, aliased; by foreign-key column name (the referenced row)', async (t) => {
  const byConstraint = await s.from('projects').select('id, client:projects_client_fkey(name)').order('id')
  t.equal(byConstraint.error, null)
  t.same(byConstraint.data, [{ id: 1, client: { name: 'Acme' } }, { id: 2, client: { name: 'Bolt' } }, { id: 3, client: null }])
  const byColumn = await s.from('projects').select('*, client:client_id(*)').eq('id', 1)
  t.equal(byColumn.error, null)
  t.same(byColumn.data, [{ id: 1, name: 'Apollo', client_id: 1, owner_id: 1, client: { id: 1, name: 'Acme' } }])
  const unaliased = await s.from('projects').select('id, owner_id(name)').eq('id', 2)
  t.equal(unaliased.error, null)
  t.same(unaliased.data, [{ id: 2, owner_id: { name: 'Vic' } }])
  // The constraint's name from the referenced side is the one-to-many: its rows, filtered and counted as any embed.
  const back = await s.from('clients').select('name, projects:projects_client_fkey(name)').eq('projects.name', 'Apollo').order('id')
  t.equal(back.error, null)
  t.same(back.data, [{ name: 'Acme', projects: [{ name: 'Apollo' }] }, { name: 'Bolt', projects: [] }])
  const inner = await s.from('tasks').select('id, who:assignee_id!inner(name)').eq('who.name', 'Vic').order('id')
  t.equal(inner.error, null)
  t.same(inner.data, [{ id: 3, who: { name: 'Vic' } }, { id: 4, who: { name: 'Vic' } }])
})

t.test('a key name does not reach a view; an unknown one is PGRST200', async (t) => {
  // The view shows the clients' key, so projects relate to it too (by its name); a constraint or column
  // target means a table only (PostgREST's findRel), so `client_id` is not ambiguous between the two.
  const view = await s.from('projects').select('id, client_list(name)').eq('id', 1)
  t.equal(view.error, null)
  t.same(view.data, [{ id: 1, client_list: { name: 'Acme' } }])
  const column = await s.from('projects').select('id, client_id(name)').eq('id', 1)
  t.equal(column.error, null)
  t.same(column.data, [{ id: 1, client_id: { name: 'Acme' } }])
  const none = await s.from('projects').select('id, nope_id(*)')
  t.equal(none.status, 400)
  t.same(none.error, {
    code: 'PGRST200',
    details: "Searched for a foreign key relationship between 'projects' and 'nope_id' in the schema 'public', but no matches were found.",
    hint: null,
    message: "Could not find a relationship between 'projects' and 'nope_id' in the schema cache",
  })
})

t.test('a self-referencing table: its own name gives the children, its key column the parent', async (t) => {
  const children = await s.from('employees').select('name, employees(name)').order('id').order('id', { referencedTable: 'employees' })
  t.equal(children.error, null)
  t.equal(children.status, 200)
  t.same(children.data, [
    { name: 'Ada', employees: [{ name: 'Bea' }, { name: 'Cid' }] },
    { name: 'Bea', employees: [{ name: 'Dee' }] },
    { name: 'Cid', employees: [] },
    { name: 'Dee', employees: [] },
  ])
  const both = await s.from('employees').select('name, manager:manager_id(name), reports:employees!manager_id(name)').eq('id', 2)
  t.equal(both.error, null)
  t.same(both.data, [{ name: 'Bea', manager: { name: 'Ada' }, reports: [{ name: 'Dee' }] }])
  const nested = await s.from('employees').select('name, employees(name, employees(name))').eq('id', 1).order('id', { referencedTable: 'employees' })
  t.equal(nested.error, null)
  t.same(nested.data, [{ name: 'Ada', employees: [{ name: 'Bea', employees: [{ name: 'Dee' }] }, { name: 'Cid', employees: [] }] }])
  // A constraint's name does not tell the two ways apart: PostgREST reads no key name on a self relationship.
  const byConstraint = await s.from('employees').select('name, employees_manager_id_fkey(name)')
  t.equal(byConstraint.status, 400)
  t.equal(byConstraint.error?.code, 'PGRST200')
})

t.test('a self one-to-one by the same convention; a self many-to-many is not embedded', async (t) => {
  // PostgREST 13 embeds neither (a TODO in its findRel); the one-to-one follows the one-to-many's convention here.
  const oneToOne = await s.from('people').select('name, mentor:mentor_id(name), mentee:people(name)').order('id')
  t.equal(oneToOne.error, null)
  t.same(oneToOne.data, [
    { name: 'Pat', mentor: null, mentee: { name: 'Quinn' } },
    { name: 'Quinn', mentor: { name: 'Pat' }, mentee: null },
  ])
  const manyToMany = await s.from('people').select('name, people!friendships(name)')
  t.equal(manyToMany.status, 400)
  t.equal(manyToMany.error?.code, 'PGRST200')
})

t.test('two embeds under one name: 400 42712, as PostgreSQL answers PostgREST', async (t) => {
  const twice = await s.from('projects').select('id, clients(name), clients(id)')
  t.equal(twice.status, 400)
  t.same(twice.error, { code: '42712', details: null, hint: null, message: 'table name "projects_clients_1" specified more than once' })
  const aliased = await s.from('projects').select('id, who:clients(name), who:users(name)')
  t.equal(aliased.status, 400)
  t.same(aliased.error, { code: '42712', details: null, hint: null, message: 'table name "projects_who_1" specified more than once' })
  const nested = await s.from('clients').select('id, projects(x:users(name), x:tasks(id))')
  t.equal(nested.status, 400)
  t.same(nested.error, { code: '42712', details: null, hint: null, message: 'table name "projects_x_2" specified more than once' })
  // Different names, and the same name at different levels, are fine.
  const apart = await s.from('projects').select('id, clients(name), again:clients(id), tasks(users(name))').eq('id', 1).order('id', { referencedTable: 'tasks' })
  t.equal(apart.error, null)
  t.same(apart.data, [
    { id: 1, clients: { name: 'Acme' }, again: { id: 1 }, tasks: [{ users: { name: 'Uma' } }, { users: { name: 'Uma' } }, { users: { name: 'Vic' } }] },
  ])
})

t.test('aggregates beside a to-one spread inside an embed group by the spread columns', async (t) => {
  const r = await s.from('projects').select('name, tasks(hours.sum(), count(), ...users(assignee:name))').order('id')
  t.equal(r.error, null)
  type Row = { name: string; tasks: Array<{ sum: number; count: number; assignee: string | null }> }
  const rows = (r.data as unknown as Row[]).map((p) => ({ ...p, tasks: [...p.tasks].sort((a, b) => (a.assignee ?? 'zz').localeCompare(b.assignee ?? 'zz')) }))
  t.same(rows, [
    { name: 'Apollo', tasks: [{ sum: 8, count: 2, assignee: 'Uma' }, { sum: 2, count: 1, assignee: 'Vic' }] },
    { name: 'Gemini', tasks: [{ sum: 7, count: 1, assignee: 'Vic' }, { sum: 1, count: 1, assignee: null }] },
    { name: 'Mercury', tasks: [] },
  ])
  const deeper = await s.from('clients').select('name, projects(name, tasks(hours.sum(), ...users(who:name)))').eq('id', 1)
  t.equal(deeper.error, null)
  type Deep = { name: string; projects: Array<{ name: string; tasks: Array<{ sum: number; who: string }> }> }
  const apollo = (deeper.data as unknown as Deep[])[0]!.projects[0]!
  t.same([...apollo.tasks].sort((a, b) => a.who.localeCompare(b.who)), [{ sum: 8, who: 'Uma' }, { sum: 2, who: 'Vic' }])
  // Inside a to-one embed: its one row is the group.
  const toOne = await s.from('tasks').select('id, projects(id.sum(), ...clients(name), users(name))').in('id', [3, 4]).order('id')
  t.equal(toOne.error, null)
  t.same(toOne.data, [
    { id: 3, projects: { sum: 1, name: 'Acme', users: { name: 'Uma' } } },
    { id: 4, projects: { sum: 2, name: 'Bolt', users: { name: 'Vic' } } },
  ])
})

t.test('an aggregate inside a to-one spread is done by the level above it (PostgREST 13 hoists it)', async (t) => {
  const root = await s.from('projects').select('...users(owner:name, count())')
  t.equal(root.error, null)
  t.same((root.data as unknown as Array<{ owner: string }>).sort((a, b) => a.owner.localeCompare(b.owner)), [{ owner: 'Uma', count: 2 }, { owner: 'Vic', count: 1 }])
  const inEmbed = await s.from('users').select('name, tasks(...projects(project:name, id.count()))').order('id')
  t.equal(inEmbed.error, null)
  type Row = { name: string; tasks: Array<{ project: string; count: number }> }
  t.same((inEmbed.data as unknown as Row[]).map((u) => ({ ...u, tasks: [...u.tasks].sort((a, b) => a.project.localeCompare(b.project)) })), [
    { name: 'Uma', tasks: [{ project: 'Apollo', count: 2 }] },
    { name: 'Vic', tasks: [{ project: 'Apollo', count: 1 }, { project: 'Gemini', count: 1 }] },
  ])
  // Through two spreads, with the aggregate's cast: the sum of the client ids over the tasks.
  const nested = await s.from('tasks').select('...projects(...clients(client:name, total:id.sum()::text))')
  t.equal(nested.error, null)
  t.same((nested.data as unknown as Array<{ client: string }>).sort((a, b) => a.client.localeCompare(b.client)), [
    { client: 'Acme', total: '3' },
    { client: 'Bolt', total: '4' },
  ])
  const toMany = await s.from('clients').select('name, ...projects(...users(id.count()))')
  t.equal(toMany.status, 400)
  t.equal(toMany.error?.code, 'PGRST127')
})

t.test("PGRST200's hint names a related table, never a function", async (t) => {
  const r = await s.from('projects').select('id, clientxx(*)')
  t.equal(r.status, 400)
  t.same(r.error, {
    code: 'PGRST200',
    details: "Searched for a foreign key relationship between 'projects' and 'clientxx' in the schema 'public', but no matches were found.",
    hint: "Perhaps you meant 'clients' instead of 'clientxx'.",
    message: "Could not find a relationship between 'projects' and 'clientxx' in the schema cache",
  })
  // The computed relationship itself still embeds by its name.
  const computed = await s.from('projects').select('id, clientx(name)').eq('id', 2)
  t.equal(computed.error, null)
  t.same(computed.data, [{ id: 2, clientx: { name: 'Bolt' } }])
})
