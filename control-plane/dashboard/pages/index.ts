// The dashboard's pages: the projects list, then the project tabs in the order
// drawn. Each is a folder with the same two files: screen.ts draws its pages
// (and answers the JSON its script reads), forms.ts handles its forms (and
// the calls of its script that act) with their notice texts (see ../module.ts).
import type { ProjectAccess } from '../../access.ts'
import type { DashboardContext, DashboardModule, FormsPart, ModuleFactory, ScreenPart } from '../module.ts'
import { accountForms } from './account/forms.ts'
import { accountScreens } from './account/screen.ts'
import { membersForms } from './members/forms.ts'
import { membersScreens } from './members/screen.ts'
import { authForms } from './auth/forms.ts'
import { authScreens } from './auth/screen.ts'
import { databaseForms } from './database/forms.ts'
import { databaseScreens } from './database/screen.ts'
import { graphqlForms } from './graphql/forms.ts'
import { graphqlScreens } from './graphql/screen.ts'
import { keysForms } from './keys/forms.ts'
import { keysScreens } from './keys/screen.ts'
import { overviewScreens } from './overview/screen.ts'
import { projectsForms } from './projects/forms.ts'
import { projectsScreens } from './projects/screen.ts'
import { pushForms } from './push/forms.ts'
import { pushScreens } from './push/screen.ts'
import { realtimeForms } from './realtime/forms.ts'
import { realtimeScreens } from './realtime/screen.ts'
import { restForms } from './rest/forms.ts'
import { restScreens } from './rest/screen.ts'
import { sqlForms } from './sql/forms.ts'
import { sqlScreens } from './sql/screen.ts'
import { serversForms } from './servers/forms.ts'
import { serversScreens } from './servers/screen.ts'
import { settingsForms } from './settings/forms.ts'
import { settingsScreens } from './settings/screen.ts'
import { storageForms } from './storage/forms.ts'
import { storageScreens } from './storage/screen.ts'
import { tablesForms } from './tables/forms.ts'
import { tablesScreens } from './tables/screen.ts'
import { usersForms } from './users/forms.ts'
import { usersScreens } from './users/screen.ts'
import { usageScreens } from './usage/screen.ts'

/**
 * What a member needs for a room's pages and JSON reads (`read`) and for its
 * forms and the calls that act (`act`), unless `except` names the route
 * (`METHOD path`, the path as the route declares it; `operator`: the
 * operator's alone). A room without it is the operator's alone, except
 * where a route declares its own `access` (control-plane/access.ts).
 */
interface RoomAccess {
  read: ProjectAccess
  act: ProjectAccess
  except?: Record<string, ProjectAccess | 'operator'>
}

function withAccess<R extends { method: string; path: string; access?: ProjectAccess }>(routes: R[] | undefined, access: RoomAccess | undefined, act: boolean): R[] | undefined {
  if (routes === undefined || access === undefined) return routes
  return routes.map((route) => {
    if (route.access !== undefined) return route
    const named = access.except?.[`${route.method} ${route.path}`]
    if (named === 'operator') return route
    return { ...route, access: named ?? (act && route.method !== 'GET' ? access.act : access.read) }
  })
}

/** One page module: a tab (or none, outside a project), its screen and its forms, with what a member needs for each. */
function room(tab: DashboardModule['tab'], screens: (context: DashboardContext) => ScreenPart, forms?: (context: DashboardContext) => FormsPart, access?: RoomAccess): ModuleFactory {
  return (context) => {
    const drawn = screens(context)
    const acted = forms?.(context) ?? {}
    return {
      tab,
      pages: withAccess(drawn.pages, access, false),
      forms: withAccess(acted.forms, access, true),
      calls: withAccess([...(drawn.calls ?? []), ...(acted.calls ?? [])], access, true),
      notices: acted.notices,
    }
  }
}

/** Reads for every member, changes for developers and owners: the rooms of a project's settings and data. */
const MEMBERS_WORK: RoomAccess = { read: 'read', act: 'write' }

export const MODULES: ModuleFactory[] = [
  // The list answers for the caller (a member sees their projects); creating one is the operator's.
  room(undefined, projectsScreens, projectsForms, { read: 'read', act: 'read', except: { 'POST /projects': 'operator' } }),
  room(undefined, serversScreens, serversForms),
  // The member's own account (no project in its path: each member their own).
  room(undefined, accountScreens, accountForms, { read: 'read', act: 'read' }),
  // The Overview shows; it has no forms.
  room({ id: 'overview', label: 'Overview' }, overviewScreens, undefined, MEMBERS_WORK),
  room({ id: 'auth', label: 'Auth' }, authScreens, authForms, MEMBERS_WORK),
  room({ id: 'users', label: 'Users' }, usersScreens, usersForms, MEMBERS_WORK),
  // Running a document as a role (service_role too) is a developer's; the types and the schema report only read.
  room({ id: 'graphql', label: 'GraphQL' }, graphqlScreens, graphqlForms, { ...MEMBERS_WORK, except: { 'POST /projects/:ref/graphql/types': 'read', 'POST /projects/:ref/graphql/report': 'read' } }),
  room({ id: 'rest', label: 'REST' }, restScreens, restForms, MEMBERS_WORK),
  room({ id: 'sql', label: 'SQL' }, sqlScreens, sqlForms),
  room({ id: 'push', label: 'Push' }, pushScreens, pushForms, MEMBERS_WORK),
  room({ id: 'realtime', label: 'Realtime' }, realtimeScreens, realtimeForms, MEMBERS_WORK),
  room({ id: 'storage', label: 'Storage' }, storageScreens, storageForms, MEMBERS_WORK),
  room({ id: 'tables', label: 'Tables' }, tablesScreens, tablesForms),
  // Usage shows a month; it has no forms.
  room({ id: 'usage', label: 'Usage' }, usageScreens, undefined, MEMBERS_WORK),
  room({ id: 'database', label: 'Database' }, databaseScreens, databaseForms, MEMBERS_WORK),
  // Rotating the signing key is the owner's.
  room({ id: 'keys', label: 'Keys' }, keysScreens, keysForms, { ...MEMBERS_WORK, except: { 'POST /projects/:ref/keys/signing/rotate': 'owner' } }),
  // Any member reads the members; the owner manages them (the forms declare `owner`).
  room({ id: 'members', label: 'Members' }, membersScreens, membersForms, { ...MEMBERS_WORK, except: { 'GET /members': 'operator' } }),
  // The plan and suspension stay the operator's; rotating the API keys and deleting, the owner's.
  room({ id: 'settings', label: 'Settings' }, settingsScreens, settingsForms, {
    ...MEMBERS_WORK,
    except: {
      'POST /projects/:ref/plan': 'operator',
      'POST /projects/:ref/suspend': 'operator',
      'POST /projects/:ref/resume': 'operator',
      'POST /projects/:ref/keys/rotate': 'owner',
      'POST /projects/:ref/delete': 'owner',
    },
  }),
]
