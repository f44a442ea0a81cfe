// The project's Settings tab: plan, products, key rotation, deletion.
import { PLANS, type ProjectRecord } from '../../../lib/catalogue.ts'
import { REF_PARAM } from '../../admin-api.ts'
import { attempt, FormState, NO_STATE } from '../form-state.ts'
import { html, type Safe } from '../html.ts'
import { NEXT_REQUEST, type DashboardContext, type DashboardModule, type Screen } from '../module.ts'

const PRODUCT_NAMES: Record<string, string> = { auth: 'Auth', push: 'Push' }

function toggle(ref: string, product: 'auth' | 'push', on: boolean): Safe {
  const name = PRODUCT_NAMES[product]!
  return html`<form class="row" method="post" action="/dashboard/projects/${ref}/products/${product}">
<input type="hidden" name="enabled" value="${on ? 'false' : 'true'}">
<span class="${on ? 'on' : 'off'}" id="${product}-state">${name}: ${on ? 'on' : 'off'}</span>
<button class="secondary" id="${product}-toggle">${on ? `Turn ${name} off` : `Turn ${name} on`}</button></form>`
}

export function settingsScreen(project: ProjectRecord, state: FormState): Screen {
  const ref = project.ref
  const body = html`<section><h2>Plan</h2>
<form method="post" action="/dashboard/projects/${ref}/plan"><label for="plan">Plan</label>
<select id="plan" name="plan" ${state.attrs('plan', 'plan')}>${PLANS.map((plan) => html`<option ${plan === state.value('plan', 'plan', project.plan) ? 'selected' : ''}>${plan}</option>`)}</select>
${state.error('plan', 'plan')}
<p><button class="secondary">Change plan</button></p></form></section>
<section><h2>Products</h2>
<p><span class="on">GraphQL: on</span> (always, with the data API)</p>
${toggle(ref, 'auth', project.authEnabled)}
${toggle(ref, 'push', project.pushEnabled)}
${state.error('product', '')}</section>
<section><h2>Keys</h2><p>A new JWT secret makes new anon and service_role keys; every token signed with the old secret stops working.</p>
<form method="post" action="/dashboard/projects/${ref}/keys/rotate" data-confirm="Every token signed with the old secret stops working. Rotate?">
<p><button class="secondary">Rotate JWT secret and keys</button></p></form></section>
<section><h2>Danger zone</h2><form method="post" action="/dashboard/projects/${ref}/delete">
<label for="confirm">Type the ref <code>${ref}</code> to delete the project and drop its database</label>
<input type="text" id="confirm" name="confirm" autocomplete="off" value="${state.value('delete', 'confirm', '')}" ${state.attrs('delete', 'confirm')}>
${state.error('delete', 'confirm')}
<p><button class="danger">Delete project</button></p></form></section>`
  return { title: 'Settings', body, project, tab: 'settings' }
}

export function settingsPage(context: DashboardContext): DashboardModule {
  const { controlPlane } = context
  const screenOf = (ref: string) => async (state: FormState) => settingsScreen(await controlPlane.get(ref), state)
  const settings = (ref: string) => `/projects/${ref}/settings`
  return {
    tab: { id: 'settings', label: 'Settings' },
    pages: [
      {
        method: 'GET',
        path: '/projects/:ref/settings',
        where: REF_PARAM,
        page: async ({ params }) => settingsScreen(await controlPlane.get(params.ref!), NO_STATE),
      },
    ],
    forms: [
      {
        method: 'POST',
        path: '/projects/:ref/plan',
        where: REF_PARAM,
        form: (input) =>
          attempt(input, {
            form: 'plan',
            fields: ['plan'],
            fieldOf: () => 'plan',
            run: async () => {
              const before = (await controlPlane.get(input.params.ref!)).plan
              await controlPlane.setPlan(input.params.ref!, input.field('plan'))
              return { to: settings(input.params.ref!), notice: 'plan', values: [before, input.field('plan')] }
            },
            screen: screenOf(input.params.ref!),
          }),
      },
      {
        method: 'POST',
        path: '/projects/:ref/products/:product',
        where: { ...REF_PARAM, product: 'auth|push' },
        form: (input) =>
          attempt(input, {
            form: 'product',
            fields: [],
            run: async () => {
              const on = input.field('enabled') === 'true'
              await controlPlane.setProduct(input.params.ref!, input.params.product!, on)
              return { to: settings(input.params.ref!), notice: on ? 'product_on' : 'product_off', values: [input.params.product!] }
            },
            screen: screenOf(input.params.ref!),
          }),
      },
      {
        method: 'POST',
        path: '/projects/:ref/keys/rotate',
        where: REF_PARAM,
        form: async ({ params }) => {
          await controlPlane.rotateKeys(params.ref!)
          return { to: `/projects/${params.ref!}`, notice: 'rotated' }
        },
      },
      {
        method: 'POST',
        path: '/projects/:ref/delete',
        where: REF_PARAM,
        form: async (input) => {
          const ref = input.params.ref!
          const project = await controlPlane.get(ref)
          if (input.field('confirm') !== ref) {
            const state = new FormState({ form: 'delete', fields: { confirm: input.field('confirm') }, error: `Type ${ref} to confirm`, field: 'confirm' })
            return { screen: { ...settingsScreen(project, state), status: 400 } }
          }
          await controlPlane.delete(ref)
          return { to: '', notice: 'deleted', values: [ref] }
        },
      },
    ],
    notices: {
      plan: ([before, after]) => (before === after ? `The plan stays ${after}.` : `Plan changed from ${before} to ${after}. ${NEXT_REQUEST}`),
      product_on: ([product]) => `${PRODUCT_NAMES[product!] ?? product} turned on. ${NEXT_REQUEST}`,
      product_off: ([product]) => `${PRODUCT_NAMES[product!] ?? product} turned off. ${NEXT_REQUEST}`,
      rotated: () => `New JWT secret, anon key and service_role key; tokens signed with the old secret are refused. ${NEXT_REQUEST}`,
    },
  }
}
