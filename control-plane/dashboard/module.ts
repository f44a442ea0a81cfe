// What a dashboard page module offers the router (routes.ts): pages (GET,
// rendered in the shared layout), forms (POST, answered with a redirect that
// carries a notice code, or the page again with the refused input and the
// error beside its field), JSON calls for the page's own script, and the
// notice texts of its codes. Each project tab is one module under pages/.
import type pg from 'pg'
import type { ProjectRecord } from '../../lib/catalogue.ts'
import type { RouteSpec } from '../../lib/http/router.ts'
import type { MinuteFigures } from '../../lib/metrics/recent-minutes.ts'
import type { AuthUsers } from '../auth-users.ts'
import type { ControlPlane } from '../control-plane.ts'
import type { PushAdminOptions } from '../push-admin.ts'
import type { Addressing } from '../views.ts'
import type { Safe } from './html.ts'

export type TabId = 'overview' | 'auth' | 'users' | 'graphql' | 'push' | 'settings'

export interface DashboardContext {
  controlPlane: ControlPlane
  addressing: Addressing
  /** Runs `fn` on the project's own database as the server's superuser (short-lived client). */
  inProject<T>(project: ProjectRecord, fn: (client: pg.ClientBase) => Promise<T>): Promise<T>
  /** Where Push's credential checks reach the providers (config BASEPLANE_FCM_TOKEN_URL). */
  push?: PushAdminOptions
  /** A project's Auth users (auth-users.ts), sending mail as this process is configured to. */
  authUsers: AuthUsers
  /**
   * This process's last hour of a project's figures, minute by minute, oldest
   * first: the data plane's counts, handed in by whoever assembles the
   * dashboard beside it (server/platform.ts); absent, the charts stay empty.
   */
  recentFigures?: (ref: string) => MinuteFigures[]
}

/** A rendered page: its body goes into the layout; with `project`, under that project's header and tabs. */
export interface Screen {
  title: string
  body: Safe
  project?: ProjectRecord
  tab?: TabId
  /** 200 unless said (a refused form answers 400 with the page and the typed input). */
  status?: number
  /** Files under /dashboard/assets/ the page loads (besides dashboard.js). */
  scripts?: string[]
  styles?: string[]
}

export interface PageInput {
  params: Record<string, string>
  query: URLSearchParams
}

/** A refused form: which form, what was typed, the error and the field it belongs to. */
export interface Refusal {
  form: string
  fields: Record<string, string>
  error: string
  /** The field's name; the error shows beside it (otherwise beside the form's button). */
  field?: string
}

export interface FormInput {
  params: Record<string, string>
  /** A posted field; '' when absent. */
  field: (name: string) => string
  form: URLSearchParams
}

export type FormAnswer =
  /** Success: back to `to` (a path under /dashboard) with notice `notice` (a code of some module's `notices`) and its values. */
  | { to: string; notice: string; values?: string[] }
  | { screen: Screen }

export interface DashboardPage extends RouteSpec {
  page: (input: PageInput) => Promise<Screen | undefined>
}

export interface DashboardForm extends RouteSpec {
  form: (input: FormInput) => Promise<FormAnswer>
}

/** A JSON call from the page's own script (same origin, signed in): answers [status, body]. */
export interface DashboardCall extends RouteSpec {
  call: (input: { params: Record<string, string>; query: URLSearchParams; body: unknown }) => Promise<[number, unknown]>
}

export interface DashboardModule {
  /** The project tab this module draws (absent for pages outside a project). */
  tab?: { id: TabId; label: string }
  pages?: DashboardPage[]
  forms?: DashboardForm[]
  calls?: DashboardCall[]
  /**
   * Notice texts by code. Values come from the URL, so each is checked by
   * routes.ts against NOTICE_VALUE (a word, a ref, a number) before it is
   * shown; a text never shows anything else the URL carried.
   */
  notices?: Record<string, (values: string[]) => string>
}

export type ModuleFactory = (context: DashboardContext) => DashboardModule

/** The path of a project's tab under /dashboard. */
export function tabPath(ref: string, tab: TabId): string {
  return tab === 'overview' ? `/projects/${ref}` : `/projects/${ref}/${tab}`
}

/** Said by every notice of a saved change: the data plane reads the catalogue again before its next request. */
export const NEXT_REQUEST = 'It applies from the next request.'
