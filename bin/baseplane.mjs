#!/usr/bin/env node
// `baseplane` / `npx baseplane`: loads the TypeScript sources through tsx.
import { register } from 'tsx/esm/api'

register()
const { main } = await import('../control-plane/cli/main.ts')
process.exitCode = await main(process.argv.slice(2))
