// The admin API's events (`GET /platform/v1/events?project=&kind=&since=&limit=&before=`):
// the fleet's events newest first, a page at a time (`next_before` names the
// next page), as `baseplane events` lists them. Bad filters answer 400
// invalid_argument naming the field.
import type { ControlPlane } from '../control-plane.ts'
import { listEvents } from '../events.ts'
import { queryNumber, type AdminRoute } from './route.ts'

/** A filter given empty is refused by the filter's check, not taken for absent. */
const text = (query: URLSearchParams, name: string) => query.get(name) ?? undefined

export function eventRoutes(controlPlane: ControlPlane): AdminRoute[] {
  return [
    {
      method: 'GET',
      path: '/events',
      handler: async ({ query }) => [
        200,
        await listEvents(controlPlane, {
          project: text(query, 'project'),
          kind: text(query, 'kind'),
          since: text(query, 'since'),
          limit: queryNumber(query, 'limit'),
          before: queryNumber(query, 'before'),
        }),
      ],
    },
  ]
}
