// The dashboard's page modules. Project tabs are drawn in this order; each
// module owns its pages, forms, JSON calls and notice texts (see ../module.ts).
import type { ModuleFactory } from '../module.ts'
import { authPage } from './auth.ts'
import { graphqlPage } from './graphql.ts'
import { overviewPage } from './overview.ts'
import { projectsPage } from './projects.ts'
import { pushPage } from './push.ts'
import { settingsPage } from './settings.ts'
import { usersPage } from './users.ts'

export const MODULES: ModuleFactory[] = [projectsPage, overviewPage, authPage, usersPage, graphqlPage, pushPage, settingsPage]
