// A member as the tests make one: invited by the operator through the admin
// API (the mail read from a real SMTP catcher), the invitation accepted
// through the dashboard's form, and a personal access token of theirs.
import { createToken, memberCaller } from '../../control-plane/members.ts'
import { linkOf, type MailCatcher } from '../auth/helpers.ts'
import { request } from './http.ts'
import type { TestPlatform } from './platform.ts'

export interface TestMember {
  token: string
  headers: Record<string, string>
}

export async function inviteMember(platform: TestPlatform, mail: MailCatcher, email: string, projects: { ref: string; role: string }[]): Promise<TestMember> {
  const since = mail.messages.length
  const operator = { authorization: `Bearer ${platform.config.adminToken}` }
  const invited = await request(`${platform.origin}/platform/v1/members`, { headers: operator, body: { email, projects } })
  if (invited.status !== 201) throw new Error(`invite ${email}: ${invited.status} ${invited.text}`)
  const link = new URL(linkOf(await mail.next(email, since)))
  const accepted = await request(`${platform.origin}/dashboard/accept`, {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: link.searchParams.get('token')!, password: 'correct horse 42' }).toString(),
  })
  if (accepted.status !== 303) throw new Error(`accept ${email}: ${accepted.status} ${accepted.text.slice(0, 300)}`)
  const controlPlane = platform.platform.controlPlane
  const id = (await controlPlane.catalogue.query<{ id: string }>('select id from baseplane.members where email = $1', [email])).rows[0]!.id
  const made = await createToken(controlPlane, (await memberCaller(controlPlane, id))!, { name: 'tests' })
  return { token: made.token, headers: { authorization: `Bearer ${made.token}` } }
}
