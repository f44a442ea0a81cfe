// Auth's face for the control plane and the CLI: the one module outside
// workers/auth/ may import (test/platform/layout.test.ts holds it). Three
// parts, each Auth's own code, re-exported as is:
//
// - Settings: what `baseplane.projects.auth_settings` holds, its validation
//   (every problem at once, each naming its setting, and one value's problem
//   for a form field) and its defaults; the table of the settings the CLI,
//   the admin API and the dashboard set (settings-table.ts: names, types,
//   bounds, defaults, labels, flags, help) and how they are shown.
// - Templates: the kinds of mail template (`recovery`, ...); a template's
//   subject and body are checked with the settings.
// - Users: user administration (users-admin.ts), the same operations the Auth
//   admin API's handlers call, run by the control plane in a scope of its own
//   (`projectScope`, on its connection to the project's database as
//   baseplane_auth_admin), so its validation, mail and audit apply.
//
// Everything else in workers/auth/ (the HTTP handlers, the SQL under db/, the
// worker) is Auth's alone, and may change without the control plane knowing.

// Settings
export {
  applyDefaults,
  googleClientIdsProblems,
  googleMissing,
  optionsView,
  redirectUrlProblem,
  settingsRefusals,
  templateBodyProblem,
  templateSubjectProblem,
  type StoredAuthSettings,
} from './settings.ts'
export {
  AUTH_OPTIONS,
  authOption,
  isCleared,
  optionProblems,
  withoutCleared,
  type AuthOption,
  type FlagPair,
  type OptionGroup,
  type ValueFlag,
} from './settings-table.ts'

// Templates and the mail record
export { TEMPLATE_KINDS, type TemplateKind } from './mail/templates.ts'
export { latestMail, type OutboxMail } from './db/mail-messages.ts'

// Users
export {
  createUser,
  deleteFactor,
  deleteUser,
  getUser,
  inviteUser,
  listUsers,
  projectScope,
  sendRecovery,
  signOutEverywhere,
  updateUser,
  userSessions,
  type AuthAdminScope,
  type UserJson,
  type UserSession,
} from './users-admin.ts'
