// Module hooks for the benchmarks (registered by from-build.mjs): the
// platform's own modules resolve to their build in dist/ (tsc's output, what
// `npm start` and a deployment run) instead of being compiled from source by
// tsx, whose output wraps every function it creates in a naming helper
// (esbuild's keepNames): about a quarter of the data plane's CPU a request
// (bench/README.md), a slower platform than users run. The benchmarks' own
// code, the test helpers and the peers stay on tsx.
export const PRODUCT_FOLDERS = ['server', 'control-plane', 'data-plane', 'workers', 'lib', 'client', 'cli']

const ROOT = new URL('../../', import.meta.url).href
const PRODUCT = new RegExp(`^(${PRODUCT_FOLDERS.join('|')})/.*\\.ts$`)

export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context)
  if (!resolved.url.startsWith(ROOT)) return resolved
  const relative = resolved.url.slice(ROOT.length)
  if (!PRODUCT.test(relative)) return resolved
  return { url: `${ROOT}dist/${relative.slice(0, -3)}.js`, format: 'module', shortCircuit: true }
}
