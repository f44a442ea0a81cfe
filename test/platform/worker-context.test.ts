// Each concern's worker gets only the project settings it reads: the JWT
// secret and the auth settings (mail templates, the Google client secret)
// cross to Auth's threads only.
import t from 'tap'
import { baseUrlOf } from '../../lib/catalogue.ts'
import { platformLoginName } from '../../lib/db/platform-logins.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const platform = await startTestPlatform(t)
const project = await platform.createProject({ auth: true, push: true })
const { dataPlane } = platform.platform

t.test('GraphQL, Push and REST get no secret and no auth settings', async (t) => {
  for (const concern of ['graphql', 'push', 'rest'] as const) {
    const context = dataPlane.contextOf(project.record, concern)
    // REST's OpenAPI description names the project's host; its exposed schemas, max rows and pre-request function are the project's.
    // Push also runs the platform's own statements (provider keys), on the platform's login role.
    const own = concern === 'rest' ? ['baseUrl', 'maxRows', 'plans', 'preRequest', 'schemas', 'txEnd'] : concern === 'push' ? ['platformDatabase'] : []
    t.same(Object.keys(context).sort(), [...own, 'caps', 'database', 'plan', 'readOnly', 'ref', 'roleTimeouts', 'version'].sort(), `${concern}: only what it reads`)
    t.equal(context.database.user, project.record.dbApiRole, `${concern}: the caller's statements on the API's login role`)
    if (concern === 'push') t.equal(context.platformDatabase?.user, platformLoginName(project.record.dbApiRole, 'platform'))
    t.notOk(JSON.stringify(context).includes(project.record.jwtSecret), `${concern}: the JWT secret is nowhere in it`)
    t.notOk(JSON.stringify(context).includes(project.record.signingKeys[0]!.privateJwk.d!), `${concern}: nor the signing key`)
    t.equal(context.ref, project.ref)
  }
})

t.test('Auth gets its settings, the JWT secret and the base URL', async (t) => {
  const context = dataPlane.contextOf(project.record, 'auth')
  t.same(Object.keys(context).sort(), ['authSettings', 'baseUrl', 'caps', 'database', 'jwtSecret', 'plan', 'platformDatabase', 'projectName', 'projectRoles', 'readOnly', 'ref', 'roleTimeouts', 'signingKeys', 'version'])
  t.equal(context.database.user, platformLoginName(project.record.dbApiRole, 'auth'), "Auth's statements on its own login role")
  t.equal(context.platformDatabase?.user, platformLoginName(project.record.dbApiRole, 'platform'), 'the quota counters on the platform role')
  t.match(context, {
    ref: project.ref,
    jwtSecret: project.record.jwtSecret,
    authSettings: project.record.authSettings,
    projectRoles: [],
    signingKeys: project.record.signingKeys,
    baseUrl: baseUrlOf(project.ref, platform.config.publicUrl, platform.config.baseDomain),
  })
})

t.test('a context is made once per project record and concern', async (t) => {
  t.equal(dataPlane.contextOf(project.record, 'graphql'), dataPlane.contextOf(project.record, 'graphql'))
  t.not(dataPlane.contextOf(project.record, 'graphql'), dataPlane.contextOf(project.record, 'push'))
})
