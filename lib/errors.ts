// Platform error catalogue. Every error the platform (control plane, data-plane
// gate, CLI) throws is one of these, with a stable code and an HTTP status.
// Service-specific catalogues (auth, graphql, push) live with their workers and
// reuse the same base class so the data plane can serialise them alike.

const BRAND = Symbol.for('baseplane.error')

export interface ErrorData {
  code: string
  message: string
  status: number
  hint?: string
  /** Seconds the client should wait before trying again (sent as Retry-After). */
  retryAfter?: number
  /** The field a refusal concerns (BaseplaneError.field). */
  field?: string
}

export class BaseplaneError extends Error {
  readonly code: string
  readonly status: number
  readonly hint: string | undefined
  /** Seconds the client should wait before trying again (sent as Retry-After). */
  readonly retryAfter: number | undefined
  /**
   * The request or settings field a refusal concerns (`site_url`, `client_secret`, `key_id`), so a
   * form draws the error beside that field without reading the sentence. Never part of a response body.
   */
  field: string | undefined
  readonly [BRAND] = true

  constructor(code: string, message: string, status: number, hint?: string, retryAfter?: number) {
    super(message)
    this.name = 'BaseplaneError'
    this.code = code
    this.status = status
    this.hint = hint
    this.retryAfter = retryAfter
    this.field = undefined
  }

  /** Names the field this refusal concerns; answers the error itself, to be thrown. */
  concerning(field: string | undefined): this {
    this.field = field
    return this
  }

  /** Errors cross worker threads and processes as plain data. */
  toData(): ErrorData {
    return {
      code: this.code,
      message: this.message,
      status: this.status,
      ...(this.hint ? { hint: this.hint } : {}),
      ...(this.retryAfter !== undefined ? { retryAfter: this.retryAfter } : {}),
      ...(this.field !== undefined ? { field: this.field } : {}),
    }
  }

  static fromData(data: ErrorData): BaseplaneError {
    return new BaseplaneError(data.code, data.message, data.status, data.hint, data.retryAfter).concerning(data.field)
  }

  static is(value: unknown): value is BaseplaneError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true
  }
}

export class ConfigError extends BaseplaneError {
  constructor(message: string) {
    super('invalid_config', message, 500)
    this.name = 'ConfigError'
  }
}

/**
 * Retry-After of an answer for something unavailable (a database restarting,
 * missing or refusing connections): long enough for a restart or a freed
 * connection, short enough not to lose a user.
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2

/** Errors of the project gate and control plane, by stable code. */
export const platformErrors = {
  noApiKey: () =>
    new BaseplaneError('no_api_key', 'No API key found in request', 401, 'Send the project\'s anon or service_role key in the apikey header.'),
  invalidApiKey: () =>
    new BaseplaneError('invalid_api_key', 'Invalid API key', 401, 'Send this project\'s anon or service_role key in the apikey header.'),
  badJwt: (reason: string) => new BaseplaneError('bad_jwt', `Invalid JWT: ${reason}`, 401),
  unknownProject: (ref: string) => new BaseplaneError('project_not_found', `Project "${ref}" not found`, 404),
  unknownProjectRole: (ref: string, role: string) => new BaseplaneError('role_not_found', `Project "${ref}" has no role "${role}"`, 404),
  noProject: () =>
    new BaseplaneError('project_not_found', 'No project in the request: use <ref>.<base domain> or the /project/<ref>/ prefix', 404),
  notFound: (path: string) => new BaseplaneError('not_found', `No route for ${path}`, 404),
  upgradeRequired: (path: string) =>
    new BaseplaneError('upgrade_required', `${path} is a WebSocket: connect with supabase.channel() (a GET with Upgrade: websocket)`, 426),
  productDisabled: (product: string, ref: string) =>
    new BaseplaneError(
      'product_disabled',
      `${product[0]!.toUpperCase()}${product.slice(1)} is not enabled for project ${ref}`,
      503,
      `Enable it with: baseplane products enable ${product} ${ref}`,
    ),
  throttled: () =>
    new BaseplaneError('over_request_rate_limit', 'Request rate limit reached', 429),
  bodyTooLarge: (limit: number) => new BaseplaneError('request_too_large', `Request body exceeds ${limit} bytes`, 413),
  invalidJson: () => new BaseplaneError('bad_json', 'Could not parse request body as JSON', 400),
  unauthorizedAdmin: () => new BaseplaneError('unauthorized', 'A valid platform admin token is required', 401),
  /** `field`: the request field the refusal concerns, when it concerns one. */
  invalidArgument: (message: string, field?: string) => new BaseplaneError('invalid_argument', message, 400).concerning(field),
  overloaded: (retryAfter: number) =>
    new BaseplaneError(
      'service_unavailable',
      'Too many requests for this project are waiting; try again shortly',
      503,
      'Each project may run a few requests at once per service (more on larger plans); spread requests out or retry after the Retry-After seconds.',
      retryAfter,
    ),
  stopping: () =>
    new BaseplaneError('service_unavailable', 'This server is stopping; send the request again on a new connection', 503, undefined, 1),
  databaseUnavailable: (ref: string) =>
    new BaseplaneError('database_unavailable', `The database of project ${ref} is unavailable`, 503, undefined, UNAVAILABLE_RETRY_AFTER_SECONDS),
  /** A database the control plane needed (the catalogue, or a project's) did not answer. */
  someDatabaseUnavailable: () =>
    new BaseplaneError('database_unavailable', 'A database this request needs is unavailable; try again shortly', 503, undefined, UNAVAILABLE_RETRY_AFTER_SECONDS),
  /** No database server that takes new projects answers now. */
  noServerAvailable: () =>
    new BaseplaneError('database_unavailable', 'No database server that takes new projects answers now; try again shortly', 503, 'baseplane servers list shows each server\'s state.', UNAVAILABLE_RETRY_AFTER_SECONDS),
  serverNotFound: (id: string) => new BaseplaneError('server_not_found', `No database server "${id}" (baseplane servers list names them)`, 404),
  /** The catalogue could not be read: no project can be resolved until it answers. */
  catalogueUnavailable: () =>
    new BaseplaneError('catalogue_unavailable', 'The platform catalogue is unavailable; try again shortly', 503, undefined, UNAVAILABLE_RETRY_AFTER_SECONDS),
  internal: () => new BaseplaneError('unexpected_failure', 'Unexpected failure, please check server logs for more information', 500),
  /** A concern this node runs no threads for (its dispatcher was built without it). */
  serviceNotOnNode: (concern: string) => new BaseplaneError('service_unavailable', `The ${concern} service is not available on this node`, 503),
  /**
   * A suspended project's answer to every request, in each service's refusal
   * shape. 403, not 503: retrying does not help, only its operator can resume
   * it (so no Retry-After). The operator's reason is never in it.
   */
  projectSuspended: () => new BaseplaneError('project_suspended', 'This project is suspended; its operator can resume it', 403),
  /** A paused project's answer when the fleet does not wake projects on request (BASEPLANE_WAKE_ON_REQUEST). */
  projectPaused: () =>
    new BaseplaneError('project_paused', 'This project is paused after a time without requests; its operator can resume it', 403),
  /** A paused project being woken by a request that did not see the resume finish within BASEPLANE_WAKE_WAIT_MS. */
  projectWaking: (retryAfter: number) =>
    new BaseplaneError('project_waking', 'This project was paused and is being resumed; try again shortly', 503, undefined, retryAfter),
  /** The operator's refusals of `projects suspend` and `projects resume`. */
  alreadySuspended: (ref: string, since: string | undefined) =>
    new BaseplaneError('project_already_suspended', `Project ${ref} is already suspended${since ? ` (since ${since})` : ''}; resume it first to suspend it again`, 409),
  notSuspended: (ref: string) =>
    new BaseplaneError('project_not_suspended', `Project ${ref} is neither suspended nor paused: there is nothing to resume`, 409),
}

/**
 * Several refusals found together, each naming its field: a dashboard form
 * draws every one beside its input; an API answers them as one refusal with
 * the first one's code and status, their sentences joined.
 */
export class FieldErrors extends BaseplaneError {
  readonly errors: readonly BaseplaneError[]
  constructor(errors: readonly BaseplaneError[]) {
    super(errors[0]?.code ?? 'invalid_argument', errors.map((e) => e.message).join('; '), errors[0]?.status ?? 400)
    this.errors = errors
  }
}

/**
 * An operation's (or a form's) checks run one after another, each refusal
 * kept: `check` answers its function's value (undefined once refused),
 * `settle` throws what was refused, one error as itself and several as
 * FieldErrors, so a page shows every field's error at once, not only the first.
 */
export class Checks {
  readonly #refused: BaseplaneError[] = []

  check<T>(fn: () => T): T | undefined {
    try {
      return fn()
    } catch (error) {
      if (!BaseplaneError.is(error) || error.status >= 500) throw error
      this.#refused.push(error)
      return undefined
    }
  }

  /** A refusal found without a check to run. */
  refuse(error: BaseplaneError): void {
    this.#refused.push(error)
  }

  settle(): void {
    if (this.#refused.length === 1) throw this.#refused[0]
    if (this.#refused.length > 1) throw new FieldErrors(this.#refused)
  }
}
