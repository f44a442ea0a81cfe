// The GraphQL engine is importable as `baseplane/graphql` from plain node
// (no TypeScript loader), as the compiled output `npm install` builds.
import { execFile } from 'node:child_process'
import t from 'tap'
import { graphqlProject } from './helpers.ts'

t.test('plain node imports baseplane/graphql and resolves on a pg client', async (t) => {
  const p = await graphqlProject(t, `create table note (id int primary key, body text); insert into note values (1, 'hello');`)
  const db = p.project
  const script = `
    import pg from 'pg'
    import { resolve } from 'baseplane/graphql'
    const client = new pg.Client({ host: ${JSON.stringify(db.dbHost)}, port: ${db.dbPort}, database: ${JSON.stringify(db.dbName)}, user: ${JSON.stringify(db.dbOwnerRole)}, password: ${JSON.stringify(db.dbOwnerPassword)} })
    await client.connect()
    await client.query('begin')
    await client.query('insert into note values (2, $1)', ['uncommitted'])
    const answer = await resolve(client, { query: '{ noteCollection { edges { node { id body } } } }' })
    await client.query('rollback')
    await client.end()
    console.log(JSON.stringify(answer))
  `
  const output: string = await new Promise((resolve, reject) => {
    // No --import tsx here: this is what a user of the package runs.
    execFile(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd(), env: { PATH: process.env.PATH } }, (error, stdout, stderr) =>
      error ? reject(new Error(stderr || error.message)) : resolve(stdout),
    )
  })
  t.same(JSON.parse(output), { data: { noteCollection: { edges: [{ node: { id: 1, body: 'hello' } }, { node: { id: 2, body: 'uncommitted' } }] } } })
})
