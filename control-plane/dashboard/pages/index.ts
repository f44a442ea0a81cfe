// The dashboard's pages: the projects list, then the project tabs in the order
// drawn. Each is a folder with the same two files: screen.ts draws its pages
// (and answers the JSON its script reads), forms.ts handles its forms (and
// the calls of its script that act) with their notice texts (see ../module.ts).
import type { DashboardContext, DashboardModule, FormsPart, ModuleFactory, ScreenPart } from '../module.ts'
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
import { usersForms } from './users/forms.ts'
import { usersScreens } from './users/screen.ts'
import { usageScreens } from './usage/screen.ts'

/** One page module: a tab (or none, outside a project), its screen and its forms. */
function room(tab: DashboardModule['tab'], screens: (context: DashboardContext) => ScreenPart, forms?: (context: DashboardContext) => FormsPart): ModuleFactory {
  return (context) => {
    const drawn = screens(context)
    const acted = forms?.(context) ?? {}
    return { tab, pages: drawn.pages, forms: acted.forms, calls: [...(drawn.calls ?? []), ...(acted.calls ?? [])], notices: acted.notices }
  }
}

export const MODULES: ModuleFactory[] = [
  room(undefined, projectsScreens, projectsForms),
  room(undefined, serversScreens, serversForms),
  // The Overview shows; it has no forms.
  room({ id: 'overview', label: 'Overview' }, overviewScreens),
  room({ id: 'auth', label: 'Auth' }, authScreens, authForms),
  room({ id: 'users', label: 'Users' }, usersScreens, usersForms),
  room({ id: 'graphql', label: 'GraphQL' }, graphqlScreens, graphqlForms),
  room({ id: 'rest', label: 'REST' }, restScreens, restForms),
  room({ id: 'sql', label: 'SQL' }, sqlScreens, sqlForms),
  room({ id: 'push', label: 'Push' }, pushScreens, pushForms),
  room({ id: 'realtime', label: 'Realtime' }, realtimeScreens, realtimeForms),
  room({ id: 'storage', label: 'Storage' }, storageScreens, storageForms),
  // Usage shows a month; it has no forms.
  room({ id: 'usage', label: 'Usage' }, usageScreens),
  room({ id: 'database', label: 'Database' }, databaseScreens, databaseForms),
  room({ id: 'keys', label: 'Keys' }, keysScreens, keysForms),
  room({ id: 'settings', label: 'Settings' }, settingsScreens, settingsForms),
]
