// Many projects created at once on one control plane all get made (a CI
// timeout found this): a creation once asked the catalogue's pool for the
// number of live nodes from inside its own transaction, so four at once held
// the pool's four connections while each waited for a fifth, forever.
import t from 'tap'
import { startTestPlatform } from '../helpers/platform.ts'

t.test('eight projects created at once are all made', async (t) => {
  const platform = await startTestPlatform(t)
  const creating = Promise.all(Array.from({ length: 8 }, (_, i) => platform.createProject({ name: `At once ${i}` })))
  const deadline = new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 60_000).unref())
  const made = await Promise.race([creating, deadline])
  t.not(made, 'hung', 'they finish within a minute')
  if (made === 'hung') return
  t.equal(new Set(made.map((project) => project.ref)).size, 8, 'eight distinct projects')
})
