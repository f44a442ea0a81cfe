import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)

/** Baseplane's version, from package.json (the CLI's --version). */
export const VERSION: string = (require('../package.json') as { version: string }).version
