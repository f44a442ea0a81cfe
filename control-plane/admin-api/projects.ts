// The admin API's projects (`/platform/v1/projects...`): list, create, show,
// change the plan, delete; API keys and their rotation, the owner's database
// URL, products on and off. The same ControlPlane methods and views as the CLI.
import { standingOn } from '../access.ts'
import type { ControlPlane } from '../control-plane.ts'
import { createProject, deleteProject, getProject, listAllProjects, rotateProjectKeys, setProjectPlan, setProjectProduct } from '../projects.ts'
import { lastRequestOf } from '../suspension.ts'
import { dbUrlView, keysView, projectDetailView, projectView, type Addressing } from '../views.ts'
import { adminFields, REF_PARAM, type AdminRoute } from './route.ts'

export function projectRoutes(controlPlane: ControlPlane, addressing: Addressing): AdminRoute[] {
  return [
    {
      method: 'GET', access: 'read',
      path: '/projects',
      // A member sees only their own projects (nothing of the others, not even that they exist).
      handler: async ({ caller }) => [200, (await listAllProjects(controlPlane)).filter((p) => standingOn(caller, p.ref) !== undefined).map((p) => projectView(p, addressing))],
    },
    {
      method: 'POST',
      path: '/projects',
      handler: async ({ body }) => {
        const input = await body()
        const fields = adminFields(input)
        const project = await createProject(controlPlane, { name: fields.string('name'), plan: fields.optionalString('plan'), signingAlg: fields.optionalString('signing_alg') })
        return [201, { ...projectView(project, addressing), ...keysView(project, addressing) }]
      },
    },
    {
      method: 'GET', access: 'read',
      path: '/projects/:ref', where: REF_PARAM,
      handler: async ({ params }) => [200, projectDetailView(await getProject(controlPlane, params.ref!), addressing, await lastRequestOf(controlPlane, params.ref!))],
    },
    {
      method: 'PATCH',
      path: '/projects/:ref', where: REF_PARAM,
      handler: async ({ params, body }) => {
        const input = await body()
        const plan = adminFields(input).string('plan')
        return [200, projectView(await setProjectPlan(controlPlane, params.ref!, plan), addressing)]
      },
    },
    {
      method: 'DELETE', access: 'owner', ownEvents: true,
      path: '/projects/:ref', where: REF_PARAM,
      handler: async ({ params }) => {
        await deleteProject(controlPlane, params.ref!)
        return [204, null]
      },
    },
  ]
}

/** The project's API keys (`/keys`, `/keys/rotate`) and its owner's database URL (`/db-url`). */
export function keyRoutes(controlPlane: ControlPlane, addressing: Addressing): AdminRoute[] {
  return [
    {
      method: 'GET', access: 'write',
      path: '/projects/:ref/keys', where: REF_PARAM,
      handler: async ({ params }) => [200, keysView(await getProject(controlPlane, params.ref!), addressing)],
    },
    {
      method: 'POST', access: 'owner',
      path: '/projects/:ref/keys/rotate', where: REF_PARAM,
      handler: async ({ params }) => [200, keysView(await rotateProjectKeys(controlPlane, params.ref!), addressing)],
    },
    {
      method: 'GET', access: 'write',
      path: '/projects/:ref/db-url', where: REF_PARAM,
      handler: async ({ params }) => [200, dbUrlView(await getProject(controlPlane, params.ref!))],
    },
  ]
}

/** Products on (`PUT`) and off (`DELETE`): `/projects/{ref}/products/{auth|push}`. */
export function productRoutes(controlPlane: ControlPlane, addressing: Addressing): AdminRoute[] {
  return [
    {
      method: 'PUT', access: 'write',
      path: '/projects/:ref/products/:product', where: { ...REF_PARAM, product: '[a-z]+' },
      handler: async ({ params }) => [200, projectView(await setProjectProduct(controlPlane, params.ref!, params.product!, true), addressing)],
    },
    {
      method: 'DELETE', access: 'write',
      path: '/projects/:ref/products/:product', where: { ...REF_PARAM, product: '[a-z]+' },
      handler: async ({ params }) => [200, projectView(await setProjectProduct(controlPlane, params.ref!, params.product!, false), addressing)],
    },
  ]
}
