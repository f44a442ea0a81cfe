// The one doorway (issue 12 item 2): one router, one body reader, one error
// encoder per wire shape, and the concerns' manifests as the only place their
// paths are named.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { BaseplaneError, platformErrors } from '../../lib/errors.ts'
import { fieldsOf, readJson, readJsonObject } from '../../lib/http/body.ts'
import { gotrueErrorResponse, graphqlDataErrorResponse, graphqlErrorResponse, platformErrorResponse, refusalResponse } from '../../lib/http/errors.ts'
import { Router } from '../../lib/http/router.ts'
import { authManifest } from '../../workers/auth/manifest.ts'
import { graphqlManifest } from '../../workers/graphql/manifest.ts'
import { pushManifest } from '../../workers/push/manifest.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')

t.test('router: params, 404, 405 with the methods in declaration order, constraints', async (t) => {
  const router = new Router(
    [
      { method: 'POST', path: '/items', name: 'create' },
      { method: 'GET', path: '/items', name: 'list' },
      { method: 'GET', path: '/items/:id', name: 'get' },
      { method: 'PUT', path: '/kinds/:kind', name: 'kind', where: { kind: '[a-z_]+' } },
    ],
    { decodeParams: true },
  )
  const found = router.match('GET', '/items/a%20b')
  t.equal(found.kind, 'found')
  if (found.kind === 'found') {
    t.equal(found.route.name, 'get')
    t.same(found.params, { id: 'a b' })
  }
  t.same(router.match('DELETE', '/items'), { kind: 'method_not_allowed', allow: ['POST', 'GET'] })
  t.same(router.match('GET', '/nothing'), { kind: 'not_found' })
  t.same(router.match('GET', '/items/'), { kind: 'not_found' }, 'trailing slash is a different path unless asked')
  t.same(router.match('PUT', '/kinds/Bad'), { kind: 'not_found' }, 'a param outside its pattern matches nothing')
  t.throws(() => router.match('GET', '/items/%E0'), URIError, 'a malformed escape is the caller\'s 500, as before')
  const lenient = new Router([{ method: 'GET', path: '/devices', name: 'list' }], { ignoreTrailingSlash: true })
  t.equal(lenient.match('GET', '/devices//').kind, 'found')
})

t.test('body reader: blank, bad JSON, not an object, typed fields naming the field', async (t) => {
  const errors = { invalid: (detail: string) => platformErrors.invalidArgument(`bad: ${detail}`) }
  t.same(readJsonObject('  ', errors), {})
  t.same(readJsonObject('{"a":1}', errors), { a: 1 })
  t.throws(() => readJsonObject('{', errors), { code: 'invalid_argument', message: /^bad: / })
  t.throws(() => readJsonObject('[1]', errors), { code: 'invalid_argument', message: 'bad: the body must be a JSON object' })
  t.throws(() => readJson('', { ...errors, empty: () => platformErrors.invalidArgument('A JSON body is required') }), { message: 'A JSON body is required' })
  t.same(readJson('[1]', errors), [1])

  const fields = fieldsOf({ name: 'x', count: 2, on: true, gone: null, wrong: 5 }, platformErrors.invalidArgument)
  t.equal(fields.string('name'), 'x')
  t.equal(fields.number('count'), 2)
  t.equal(fields.boolean('on'), true)
  t.equal(fields.optionalString('gone'), undefined, 'null reads as absent')
  t.throws(() => fields.string('missing'), { code: 'invalid_argument', message: '"missing" is required', status: 400 })
  t.throws(() => fields.optionalString('wrong'), { code: 'invalid_argument', message: '"wrong" must be a string' })
  t.throws(() => fields.optionalBoolean('name'), { message: '"name" must be a boolean' })
  t.throws(() => fields.optionalNumber('on'), { message: '"on" must be a number' })
})

t.test('encoders: GoTrue\'s two shapes, the gate\'s bad_jwt as GoTrue words it, the platform\'s, pg_graphql\'s', async (t) => {
  const error = new BaseplaneError('weak_password', 'Too weak', 422)
  t.same(gotrueErrorResponse(error, {}, { weak_password: { reasons: ['length'] } }), {
    status: 422,
    headers: { 'content-type': 'application/json', 'x-sb-error-code': 'weak_password' },
    body: '{"code":422,"error_code":"weak_password","msg":"Too weak","weak_password":{"reasons":["length"]}}',
  })
  t.same(gotrueErrorResponse(error, { 'x-supabase-api-version': '2024-01-01' }), {
    status: 422,
    headers: { 'content-type': 'application/json', 'x-supabase-api-version': '2024-01-01' },
    body: '{"code":"weak_password","message":"Too weak"}',
  })
  t.same(refusalResponse(platformErrors.badJwt('token has expired'), authManifest.refusals, {}), {
    status: 403,
    headers: { 'content-type': 'application/json', 'x-sb-error-code': 'bad_jwt' },
    body: '{"code":403,"error_code":"bad_jwt","msg":"invalid JWT: unable to parse or verify signature, token has expired"}',
  })
  t.same(refusalResponse(platformErrors.noApiKey(), pushManifest.refusals, {}), platformErrorResponse(platformErrors.noApiKey()))
  t.same(platformErrorResponse(platformErrors.overloaded(3)).headers, { 'content-type': 'application/json', 'x-sb-error-code': 'service_unavailable', 'retry-after': '3' })
  t.same(graphqlErrorResponse(405, 'Use POST with a JSON body', { allow: 'POST' }), {
    status: 405,
    headers: { 'content-type': 'application/json', allow: 'POST' },
    body: '{"errors":[{"message":"Use POST with a JSON body"}]}',
  })
  t.same(graphqlDataErrorResponse('boom'), { status: 200, headers: { 'content-type': 'application/json' }, body: '{"data":null,"errors":[{"message":"boom"}]}' })
})

t.test('manifests: the open routes are Auth\'s emailed link, provider redirects, the public JWKS and the SAML endpoints an identity provider calls, and only the manifests name concern paths', async (t) => {
  const open = [authManifest, graphqlManifest, pushManifest].flatMap((m) => m.routes.filter((r) => r.open).map((r) => `${r.method} ${m.prefix}${r.path}`))
  t.same(open, [
    'GET /auth/v1/verify',
    'GET /auth/v1/.well-known/jwks.json',
    'GET /auth/v1/authorize',
    'GET /auth/v1/callback',
    'GET /auth/v1/sso/saml/metadata',
    'POST /auth/v1/sso/saml/acs',
  ])
  const dataPlane = fs.readdirSync(path.join(ROOT, 'data-plane')).filter((f) => f.endsWith('.ts'))
  for (const file of dataPlane) {
    const text = fs.readFileSync(path.join(ROOT, 'data-plane', file), 'utf8')
    for (const prefix of ['/auth/v1', '/graphql/v1', '/push/v1', "'/verify'", "'/callback'", "'/authorize'"]) {
      t.notOk(text.includes(prefix), `data-plane/${file} does not name ${prefix}`)
    }
  }
})
