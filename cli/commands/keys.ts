import { dbUrlView, keysView } from '../../control-plane/views.ts'
import type { Command } from '../command.ts'

type Keys = ReturnType<typeof keysView>

const showKeys = (result: Keys) =>
  `base URL          ${result.base_url}\nanon key          ${result.anon_key}\nservice_role key  ${result.service_role_key}`

export const keyCommands: Command[] = [
  {
    words: ['keys'],
    positionals: ['REF'],
    usage: 'keys REF [--rotate]',
    summary: "Show a project's base URL and API keys (--rotate makes a new JWT secret and keys)",
    options: { rotate: { type: 'boolean' } },
    async run(context, args) {
      const controlPlane = await context.controlPlane()
      const ref = args.positionals[0]!
      const project = args.values.rotate === true ? await controlPlane.rotateKeys(ref) : await controlPlane.get(ref)
      return keysView(project, context.addressing)
    },
    human: showKeys,
  },
  {
    words: ['db', 'url'],
    positionals: ['REF'],
    usage: 'db url REF',
    summary: "The connection string of the project's owner role (for migrations, psql)",
    async run(context, args) {
      return dbUrlView(await (await context.controlPlane()).get(args.positionals[0]!))
    },
    human: (result: { db_url: string }) => result.db_url,
  },
  {
    words: ['products', 'enable'],
    positionals: ['PRODUCT', 'REF'],
    usage: 'products enable auth|push REF',
    summary: 'Turn a product on for a project (takes effect on the next request)',
    async run(context, args) {
      const project = await (await context.controlPlane()).setProduct(args.positionals[1]!, args.positionals[0]!, true)
      return { ref: project.ref, product: args.positionals[0], enabled: true }
    },
    human: (result: { ref: string; product: string }) => `Enabled ${result.product} for ${result.ref}`,
  },
  {
    words: ['products', 'disable'],
    positionals: ['PRODUCT', 'REF'],
    usage: 'products disable auth|push REF',
    summary: 'Turn a product off for a project',
    async run(context, args) {
      const project = await (await context.controlPlane()).setProduct(args.positionals[1]!, args.positionals[0]!, false)
      return { ref: project.ref, product: args.positionals[0], enabled: false }
    },
    human: (result: { ref: string; product: string }) => `Disabled ${result.product} for ${result.ref}`,
  },
]
