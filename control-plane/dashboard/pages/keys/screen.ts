// The project's Keys tab as drawn: the asymmetric signing keys that sign its
// access tokens (kid, algorithm, state, when each signs, retires and is
// dropped), the JWKS that publishes their public halves, and the rotation
// form (asks for a confirmation). Its form is in forms.ts. No private key
// member is ever drawn: the JWKS is built from the public members only
// (lib/jwt.ts publicJwkOf).
import { publishedKeys, SIGNING_ALGS } from '../../../../lib/jwt.ts'
import { keysView } from '../../../views.ts'
import { listSigningKeys, STANDBY_SECONDS, type SigningKeyView } from '../../../signing-keys.ts'
import { NO_STATE, type FormState } from '../../form-state.ts'
import { empty, html, table, type Safe } from '../../html.ts'
import { projectPage, type DashboardContext, type Screen, type ScreenPart } from '../../module.ts'
import { getProject } from '../../../projects.ts'

/** What each state means, in the table. */
const STATE_WORDS: Record<SigningKeyView['state'], string> = {
  standby: 'published, waiting to sign',
  in_use: 'signs new tokens',
  previously_used: 'retired: still verifies the tokens it signed',
}

function keyRow(key: SigningKeyView): Safe {
  return html`<tr data-kid="${key.kid}"><td><code>${key.kid}</code></td><td>${key.alg}</td><td class="key-state">${STATE_WORDS[key.state]}</td><td>${key.signs_from}</td><td>${key.retires_at ?? '-'}</td><td>${key.drops_at ?? '-'}</td></tr>`
}

/** The rotation form; its algorithm is the newest key's (one waiting to sign is promoted with its own). */
function rotateForm(ref: string, newest: SigningKeyView | undefined, state: FormState): Safe {
  const alg = state.value('rotate', 'alg', newest?.alg ?? 'ES256')
  const waiting =
    newest?.state === 'standby'
      ? html`<p id="rotate-waiting">Key <code>${newest.kid}</code> waits to sign from ${newest.signs_from}: another rotation is refused until then, unless at once, which makes it sign now.</p>`
      : ''

  const now = state.value('rotate', 'now', '') === 'true'
  return html`${waiting}<form method="post" action="/dashboard/projects/${ref}/keys/signing/rotate" data-confirm="Rotate the signing key of ${ref}? The new key is published at once; tokens signed by the old one stay valid until they expire.">
<label for="rotate-alg">Algorithm of the new key</label>
<select id="rotate-alg" name="alg" style="max-width:14rem" ${state.attrs('rotate', 'alg')}>${SIGNING_ALGS.map((a) => html`<option ${a === alg ? 'selected' : ''}>${a}</option>`)}</select>
${state.error('rotate', 'alg')}
<label class="check"><input type="checkbox" id="rotate-now" name="now" value="true" ${now ? 'checked' : ''}> Sign with it at once (a key that leaked): verifiers that cached the JWKS may refuse new tokens for up to ${STANDBY_SECONDS / 60} minutes</label>
${state.error('rotate', 'now')}${state.error('rotate', '')}
<p><button class="danger" id="rotate-signing-key">Rotate signing key</button></p></form>`
}

/** The Keys tab of project `ref`, with the rotation form's state. */
export async function keysScreen(context: DashboardContext, ref: string, state: FormState): Promise<Screen> {
  const project = await getProject(context.controlPlane, ref)
  const view = await listSigningKeys(context.controlPlane, ref)
  const current = view.keys.filter((key) => key.state === 'in_use').at(-1)
  const jwksUrl = `${keysView(project, context.addressing).base_url}/auth/v1/.well-known/jwks.json`
  const body = html`<section><h2>Signing keys</h2>
<p>Access tokens are signed with the key in use${current ? html` (<strong id="signing-alg">${current.alg}</strong>)` : ''}; a rotation publishes the new key at once and signs with it ${STANDBY_SECONDS / 60} minutes later, so every cache of the JWKS knows it first. The old key keeps verifying its tokens until they expire, then is dropped.</p>
<div id="signing-keys">${
    view.keys.length === 0
      ? empty('No signing key: the project signs its tokens HS256 with its JWT secret until a key is rotated in.')
      : table(['Key id (kid)', 'Algorithm', 'State', 'Signs from', 'Retires', 'Dropped'], view.keys.map(keyRow))
  }</div>
${rotateForm(ref, view.keys.at(-1), state)}</section>
<section><h2>JWKS</h2><p>Verifiers fetch the public keys from <code id="jwks-url">${jwksUrl}</code> (cached up to ${STANDBY_SECONDS / 60} minutes):</p>
<pre id="jwks" tabindex="0">${JSON.stringify({ keys: publishedKeys(project.signingKeys) }, null, 2)}</pre></section>`
  return { title: 'Keys', body, project, tab: 'keys' }
}

export function keysScreens(context: DashboardContext): ScreenPart {
  return { pages: [projectPage('/keys', (ref) => keysScreen(context, ref, NO_STATE))] }
}
