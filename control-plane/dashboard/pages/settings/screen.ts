// The project's Settings tab as drawn: plan, products, key rotation,
// deletion. Its forms are in forms.ts.
import { PLANS, type ProjectRecord } from '../../../../lib/catalogue.ts'
import { NO_STATE, type FormState } from '../../form-state.ts'
import { html, type Safe } from '../../html.ts'
import { projectPage, type DashboardContext, type Screen, type ScreenPart } from '../../module.ts'
import { getProject } from '../../../projects.ts'

export const PRODUCT_NAMES: Record<string, string> = { auth: 'Auth', push: 'Push' }

function toggle(ref: string, product: 'auth' | 'push', on: boolean): Safe {
  const name = PRODUCT_NAMES[product]!
  return html`<form class="row" method="post" action="/dashboard/projects/${ref}/products/${product}">
<input type="hidden" name="enabled" value="${on ? 'false' : 'true'}">
<span class="${on ? 'on' : 'off'}" id="${product}-state">${name}: ${on ? 'on' : 'off'}</span>
<button class="secondary" id="${product}-toggle">${on ? `Turn ${name} off` : `Turn ${name} on`}</button></form>`
}

/** The Settings tab of `project`, with a form's state. */
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

export function settingsScreens(context: DashboardContext): ScreenPart {
  return { pages: [projectPage('/settings', async (ref) => settingsScreen(await getProject(context.controlPlane, ref), NO_STATE))] }
}
