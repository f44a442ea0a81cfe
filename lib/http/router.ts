// The one router every doorway uses (the data plane's concerns, each worker,
// the admin API, the dashboard): method + path pattern to a route with named
// params. It only decides found / 404 / 405; each caller answers those in its
// own wire shape (GoTrue answers an unknown method with 404, the platform with 405).

export interface RouteSpec {
  method: string
  /** Segments; `:name` captures one segment (`[^/]+`, or `where[name]`'s pattern source). */
  path: string
  where?: Readonly<Record<string, string>>
}

export type RouteMatch<R> =
  | { kind: 'found'; route: R; params: Record<string, string> }
  | { kind: 'not_found' }
  /** The path exists under other methods, listed in declaration order. */
  | { kind: 'method_not_allowed'; allow: string[] }

export interface RouterOptions {
  /** Trailing slashes are dropped before matching (Push accepts `/devices/`). */
  ignoreTrailingSlash?: boolean
  /** Params are percent-decoded (a malformed escape throws URIError, which callers answer as a 500 as before). */
  decodeParams?: boolean
}

interface Compiled<R> {
  route: R
  regex: RegExp
  names: string[]
}

function compile(spec: RouteSpec): { regex: RegExp; names: string[] } {
  const names: string[] = []
  const source = spec.path
    .split('/')
    .map((segment) => {
      if (!segment.startsWith(':')) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      const name = segment.slice(1)
      names.push(name)
      return `(${spec.where?.[name] ?? '[^/]+'})`
    })
    .join('/')
  return { regex: new RegExp(`^${source}$`), names }
}

export class Router<R extends RouteSpec> {
  readonly #routes: Compiled<R>[]
  readonly #options: RouterOptions

  constructor(routes: readonly R[], options: RouterOptions = {}) {
    this.#routes = routes.map((route) => ({ route, ...compile(route) }))
    this.#options = options
  }

  match(method: string, rawPath: string): RouteMatch<R> {
    const path = this.#options.ignoreTrailingSlash ? rawPath.replace(/\/+$/, '') : rawPath
    const allow: string[] = []
    for (const candidate of this.#routes) {
      const found = candidate.regex.exec(path)
      if (found === null) continue
      if (candidate.route.method !== method) {
        if (!allow.includes(candidate.route.method)) allow.push(candidate.route.method)
        continue
      }
      const params: Record<string, string> = {}
      candidate.names.forEach((name, i) => {
        const value = found[i + 1]!
        params[name] = this.#options.decodeParams ? decodeURIComponent(value) : value
      })
      return { kind: 'found', route: candidate.route, params }
    }
    return allow.length > 0 ? { kind: 'method_not_allowed', allow } : { kind: 'not_found' }
  }
}
