// The project's Settings tab as drawn: plan, products, key rotation,
// suspension, deletion. Its forms are in forms.ts.
import { PLANS, type ProjectRecord } from '../../../../lib/catalogue.ts'
import { NO_STATE, type FormState } from '../../form-state.ts'
import { html, type Safe } from '../../html.ts'
import { MAX_REASON_LENGTH } from '../../../suspension.ts'
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

/**
 * Suspension: an active or paused project's suspend form (a reason, shown to
 * operators only, and its ref typed to confirm, as deletion asks), or a
 * suspended or paused one's state and its Resume button.
 */
function suspensionSection(project: ProjectRecord, state: FormState): Safe {
  const ref = project.ref
  const since = project.stateChangedAt ? html` since ${project.stateChangedAt}` : ''
  const status =
    project.state === 'suspended'
      ? html`<p id="state"><span class="off">Suspended</span>${since}. Reason (operators only): <q id="state-reason">${project.stateReason ?? ''}</q></p>
<p>Every service answers 403 <code>project_suspended</code>, its database roles cannot connect and its push notifications wait in their queue.</p>`
      : project.state === 'paused'
        ? html`<p id="state"><span class="off">Paused</span>${since}, after a time without requests. Every service answers <code>project_paused</code> (or wakes it, when the platform allows it).</p>`
        : html`<p id="state"><span class="on">Active</span>: it answers every request.</p>`
  const resume =
    project.state === 'active'
      ? ''
      : html`<form method="post" action="/dashboard/projects/${ref}/resume" data-confirm="Resume ${ref}? It answers again from the next request.">
${state.error('resume', '')}<p><button class="secondary" id="resume">Resume project</button></p></form>`
  const suspend =
    project.state === 'suspended'
      ? ''
      : html`<form method="post" action="/dashboard/projects/${ref}/suspend" data-confirm="Suspend ${ref}? Every service of the project stops answering until it is resumed.">
<label for="reason">Reason (shown to operators, never to the project's users)</label>
<input type="text" id="reason" name="reason" maxlength="${MAX_REASON_LENGTH}" autocomplete="off" value="${state.value('suspend', 'reason', '')}" ${state.attrs('suspend', 'reason')}>
${state.error('suspend', 'reason')}
<label for="suspend-confirm">Type the ref <code>${ref}</code> to suspend the project (its data is kept)</label>
<input type="text" id="suspend-confirm" name="confirm" autocomplete="off" value="${state.value('suspend', 'confirm', '')}" ${state.attrs('suspend', 'confirm')}>
${state.error('suspend', 'confirm')}
<p><button class="danger" id="suspend">Suspend project</button></p></form>`
  return html`<section><h2>Suspension</h2>${status}${resume}${suspend}</section>`
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
<p><span class="on">Data API (REST): on</span> · <span class="on">GraphQL: on</span> (both always on)</p>
${toggle(ref, 'auth', project.authEnabled)}
${toggle(ref, 'push', project.pushEnabled)}
${state.error('product', '')}</section>
<section><h2>Keys</h2><p>A new JWT secret makes new anon and service_role keys; every token signed with the old secret stops working.</p>
<form method="post" action="/dashboard/projects/${ref}/keys/rotate" data-confirm="Every token signed with the old secret stops working. Rotate?">
<p><button class="secondary">Rotate JWT secret and keys</button></p></form></section>
${suspensionSection(project, state)}
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
