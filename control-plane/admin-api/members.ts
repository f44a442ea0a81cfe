// The admin API's members (issue 42): the operator's list and invitations
// (`/members`), a project's members (`/projects/{ref}/members`: any member
// reads, an owner manages), and a member's own account and personal access
// tokens (`/account...`, called with the member's token).
import type { ControlPlane } from '../control-plane.ts'
import {
  accountOf,
  createToken,
  inviteMember,
  listMembers,
  listTokens,
  projectMembers,
  removeMember,
  revokeToken,
  setMemberRole,
  type MemberMailContext,
} from '../members.ts'
import { REF_PARAM, type AdminRoute } from './route.ts'

const MEMBER_PARAM = { ...REF_PARAM, email: '[^/]{3,254}' }

export function memberRoutes(controlPlane: ControlPlane, context: MemberMailContext): AdminRoute[] {
  return [
    { method: 'GET', path: '/members', handler: async () => [200, await listMembers(controlPlane)] },
    { method: 'POST', path: '/members', ownEvents: true, handler: async ({ caller, body }) => [201, await inviteMember(controlPlane, caller, await body(), context)] },
    { method: 'GET', path: '/projects/:ref/members', where: REF_PARAM, access: 'read', handler: async ({ params }) => [200, await projectMembers(controlPlane, params.ref!)] },
    {
      method: 'POST',
      path: '/projects/:ref/members',
      where: REF_PARAM,
      access: 'owner',
      ownEvents: true,
      handler: async ({ caller, params, body }) => {
        const input = await body()
        await inviteMember(controlPlane, caller, { email: input.email, projects: [{ ref: params.ref!, role: input.role }] }, context)
        return [201, (await projectMembers(controlPlane, params.ref!)).find((m) => m.email === String(input.email).trim().toLowerCase())]
      },
    },
    {
      method: 'PATCH',
      path: '/projects/:ref/members/:email',
      where: MEMBER_PARAM,
      access: 'owner',
      ownEvents: true,
      handler: async ({ params, body }) => [200, await setMemberRole(controlPlane, params.ref!, decodeURIComponent(params.email!), (await body()).role)],
    },
    {
      method: 'DELETE',
      path: '/projects/:ref/members/:email',
      where: MEMBER_PARAM,
      access: 'owner',
      ownEvents: true,
      handler: async ({ params }) => {
        await removeMember(controlPlane, params.ref!, decodeURIComponent(params.email!))
        return [204, null]
      },
    },
    // The caller's own: no project in the path, so `read` lets every member through (the operator has no account: 403 member_only).
    { method: 'GET', path: '/account', access: 'read', handler: async ({ caller }) => [200, await accountOf(controlPlane, caller)] },
    { method: 'GET', path: '/account/tokens', access: 'read', handler: async ({ caller }) => [200, await listTokens(controlPlane, caller)] },
    { method: 'POST', path: '/account/tokens', access: 'read', handler: async ({ caller, body }) => [201, await createToken(controlPlane, caller, await body())] },
    {
      method: 'DELETE',
      path: '/account/tokens/:id',
      where: { id: '[0-9a-f-]{36}' },
      access: 'read',
      handler: async ({ caller, params }) => [200, await revokeToken(controlPlane, caller, params.id!)],
    },
  ]
}
