import { listSigningKeys, rotateSigningKey, validateSigningAlg, type SigningKeysView } from '../../control-plane/signing-keys.ts'
import { dbUrlView, keysView } from '../../control-plane/views.ts'
import { dbQueryCommand } from './db-query.ts'
import { requireYes, stringOption, table, UsageError, type Command, type ParsedArgs } from '../command.ts'
import { alwaysOnProduct, getProject, rotateProjectKeys, setProjectProduct, validateProduct } from '../../control-plane/projects.ts'

type Keys = ReturnType<typeof keysView> & { rotated?: true }

const showKeys = (result: Keys) =>
  [
    ...(result.rotated ? [`New keys for ${result.ref}: the old anon and service_role keys, and every token signed with the old JWT secret, stopped working.`] : []),
    `base URL          ${result.base_url}\nanon key          ${result.anon_key}\nservice_role key  ${result.service_role_key}`,
  ].join('\n')

const showSigningKeys = (view: SigningKeysView) =>
  view.keys.length === 0
    ? `${view.ref} has no signing key yet: its access tokens are HS256 until the platform's next start makes one`
    : table([
        ['kid', 'alg', 'state', 'signs from', 'retires', 'dropped'],
        ...view.keys.map((key) => [key.kid, key.alg, key.state, key.signs_from, key.retires_at ?? '-', key.drops_at ?? '-']),
      ])

const USAGE = 'keys REF [--rotate --yes | --signing-keys | --rotate-signing-key [--alg ES256|RS256] [--now]]'

/** `keys REF`'s options checked (they exclude each other), for the run on the home and the member's remote call alike. */
function keyChoice(args: ParsedArgs): { ref: string; rotateSigning: boolean; signingAlg: ReturnType<typeof validateSigningAlg> | undefined } {
  const ref = args.positionals[0]!
  const rotateSigning = args.values['rotate-signing-key'] === true
  const alg = stringOption(args, 'alg', false)
  const chosen = [args.values.rotate === true && '--rotate', args.values['signing-keys'] === true && '--signing-keys', rotateSigning && '--rotate-signing-key'].filter(Boolean)
  if (chosen.length > 1) throw new UsageError(`${chosen.join(' and ')} exclude each other`)
  if (!rotateSigning && (alg !== undefined || args.values.now === true)) throw new UsageError(`${alg !== undefined ? '--alg' : '--now'} goes with --rotate-signing-key`)
  if (args.values.yes === true && args.values.rotate !== true) throw new UsageError('--yes goes with --rotate')
  if (args.values.rotate === true) requireYes(args, `rotating the keys of ${ref} stops its anon and service_role keys, and every token signed with its JWT secret, at once`)
  return { ref, rotateSigning, signingAlg: alg === undefined ? undefined : validateSigningAlg(alg) }
}

export const keyCommands: Command[] = [
  {
    words: ['keys'],
    positionals: ['REF'],
    usage: USAGE,
    summary: "Show a project's base URL and API keys (--rotate makes a new JWT secret and keys), or its signing keys",
    options: { rotate: { type: 'boolean' }, yes: { type: 'boolean' }, 'signing-keys': { type: 'boolean' }, 'rotate-signing-key': { type: 'boolean' }, alg: { type: 'string' }, now: { type: 'boolean' } },
    optionHelp: {
      rotate: 'a new JWT secret, anon and service_role keys: the old keys and every token signed with the old secret stop working at once (with --yes)',
      yes: 'confirm --rotate',
      'signing-keys': 'list the signing keys (kid, algorithm, state) that sign access tokens and /auth/v1/.well-known/jwks.json publishes',
      'rotate-signing-key': 'a new signing key: published at once, signing 10 minutes later; the old one stays accepted until its tokens expire',
      alg: 'the new signing key\'s algorithm: ES256 or RS256 (default: the current key\'s)',
      now: 'the new key signs at once (or the key already waiting does): verifiers behind a cache may refuse new tokens for up to 10 minutes',
    },
    async run(context, args) {
      const { ref, rotateSigning, signingAlg } = keyChoice(args)
      const controlPlane = await context.controlPlane()
      if (rotateSigning) return rotateSigningKey(controlPlane, ref, { alg: signingAlg, now: args.values.now === true })
      if (args.values['signing-keys'] === true) return listSigningKeys(controlPlane, ref)
      if (args.values.rotate === true) return { ...keysView(await rotateProjectKeys(controlPlane, ref), context.addressing), rotated: true as const }
      return keysView(await getProject(controlPlane, ref), context.addressing)
    },
    // A member's token: the same routes (the keys for developers and owners, rotations for owners).
    remote(args) {
      const { ref, rotateSigning, signingAlg } = keyChoice(args)
      const at = `/projects/${encodeURIComponent(ref)}`
      if (rotateSigning) return { method: 'POST', path: `${at}/signing-keys/rotate`, body: { ...(signingAlg ? { alg: signingAlg } : {}), now: args.values.now === true } }
      if (args.values['signing-keys'] === true) return { method: 'GET', path: `${at}/signing-keys` }
      if (args.values.rotate === true) throw new UsageError('--rotate with a member\'s token: rotate from the dashboard\'s Settings or POST /platform/v1/projects/{ref}/keys/rotate')
      return { method: 'GET', path: `${at}/keys` }
    },
    human: (result: Keys | SigningKeysView) => ('keys' in result ? showSigningKeys(result) : showKeys(result)),
  },
  {
    words: ['db', 'url'],
    remote: (args) => ({ method: 'GET', path: `/projects/${encodeURIComponent(args.positionals[0]!)}/db-url` }),
    positionals: ['REF'],
    usage: 'db url REF',
    summary: "The connection string of the project's owner role (for migrations, psql)",
    async run(context, args) {
      return dbUrlView(await getProject(await context.controlPlane(), args.positionals[0]!))
    },
    human: (result: { db_url: string }) => result.db_url,
  },
  dbQueryCommand,
  productSwitch(true),
  productSwitch(false),
]

/** `products enable` or `products disable`. */
function productSwitch(enabled: boolean): Command {
  const verb = enabled ? 'enable' : 'disable'
  return {
    words: ['products', verb],
    positionals: ['PRODUCT', 'REF'],
    usage: `products ${verb} auth|push REF`,
    summary: enabled ? 'Turn a product on for a project (takes effect on the next request)' : 'Turn a product off for a project',
    notes: 'GraphQL (graphql), the Data API (rest) and Storage (storage) are always on for every project: they are not switched.',
    async run(context, args) {
      const [product, ref] = args.positionals as [string, string]
      if (enabled && alwaysOnProduct(product) !== undefined) return { ref: (await getProject(await context.controlPlane(), ref)).ref, product, enabled, changed: false }
      const valid = validateProduct(product)
      const controlPlane = await context.controlPlane()
      // Read first, so a switch to the state the product is already in says so instead of claiming a change.
      const before = await getProject(controlPlane, ref)
      const was = valid === 'auth' ? before.authEnabled : before.pushEnabled
      const project = await setProjectProduct(controlPlane, ref, valid, enabled)
      return { ref: project.ref, product, enabled, changed: was !== enabled }
    },
    human: (result: { ref: string; product: string; changed: boolean }) => {
      const always = alwaysOnProduct(result.product)
      if (always !== undefined) return `${always.name} is always on for ${result.ref}: nothing to enable`
      if (!result.changed) return `${result.product} is already ${enabled ? 'enabled' : 'disabled'} for ${result.ref}: nothing changed`
      return `${enabled ? 'Enabled' : 'Disabled'} ${result.product} for ${result.ref}`
    },
  }
}
