// Who calls the admin API or the dashboard, and what a route asks of them
// (issue 42): the operator (the admin token) may do everything; a member (a
// platform account in the catalogue, never a project's Auth user) acts on the
// projects they belong to, each with one role. A route or page names the
// least it needs of a member (`access`); one that names none is the
// operator's alone (plans, quotas, suspension, servers, the fleet, events).
export const MEMBER_ROLES = ['owner', 'developer', 'read-only'] as const
export type MemberRole = (typeof MEMBER_ROLES)[number]

/**
 * What a project's route asks of a member: `read` any member of the project,
 * `write` a developer or an owner, `owner` an owner (keys rotation, members,
 * deletion). Absent on a route: the operator's alone.
 */
export type ProjectAccess = 'read' | 'write' | 'owner'

export type Caller =
  | { kind: 'operator' }
  | {
      kind: 'member'
      memberId: string
      email: string
      /** The member's role on each project they belong to, by ref. */
      roles: ReadonlyMap<string, MemberRole>
    }

/** The admin token's holder. */
export const OPERATOR: Caller = Object.freeze({ kind: 'operator' })

const RANK: Record<MemberRole, number> = { 'read-only': 0, developer: 1, owner: 2 }
const NEEDED: Record<ProjectAccess, number> = { read: 0, write: 1, owner: 2 }

/** How the caller stands on a project: `operator`, their role as a member, or undefined (not a member of it). */
export function standingOn(caller: Caller, ref: string): 'operator' | MemberRole | undefined {
  return caller.kind === 'operator' ? 'operator' : caller.roles.get(ref)
}

/** Whether the caller may do what `access` names on the project (`undefined` access: the operator only). */
export function allows(caller: Caller, ref: string | undefined, access: ProjectAccess | undefined): boolean {
  if (caller.kind === 'operator') return true
  if (access === undefined || ref === undefined) return false
  const role = caller.roles.get(ref)
  return role !== undefined && RANK[role] >= NEEDED[access]
}

/** Who made a change, as events record it: `operator`, or `member:<email>`. */
export function actorOf(caller: Caller): string {
  return caller.kind === 'operator' ? 'operator' : `member:${caller.email}`
}
