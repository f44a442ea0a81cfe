// A form drawn again after a refusal keeps what the operator typed and puts
// the error beside the field it concerns (aria-describedby, aria-invalid).
import { BaseplaneError } from '../../lib/errors.ts'
import { html, Safe } from './html.ts'
import type { FormAnswer, FormInput, Refusal, Screen } from './module.ts'

export class FormState {
  readonly refusal: Refusal | undefined
  constructor(refusal?: Refusal) {
    this.refusal = refusal
  }

  /** The typed value when this form was refused, else the stored one. */
  value(form: string, field: string, stored: string): string {
    return this.refusal?.form === form && field in this.refusal.fields ? this.refusal.fields[field]! : stored
  }

  /** Attributes for the input: aria-invalid and the id of its error. */
  attrs(form: string, field: string): Safe {
    return this.#mine(form, field) ? new Safe(`aria-invalid="true" aria-describedby="${form}-${field}-error"`) : new Safe('')
  }

  /** The error paragraph beside `field` (or, with field '', beside the form's button). */
  error(form: string, field: string): Safe {
    if (!this.#mine(form, field)) return new Safe('')
    return html`<p class="field-error" role="alert" id="${form}-${field}-error">${this.refusal!.error}</p>`
  }

  #mine(form: string, field: string): boolean {
    if (this.refusal?.form !== form) return false
    return (this.refusal.field ?? '') === field
  }
}

export const NO_STATE = new FormState()

/**
 * Runs a form's operation. Success: a redirect with the notice. A refusal
 * (a BaseplaneError below 500 other than 404): the page again, drawn by
 * `screen` with the typed fields and the error placed by `fieldOf`.
 */
export async function attempt(
  input: FormInput,
  spec: {
    form: string
    fields: string[]
    fieldOf?: (message: string) => string | undefined
    run: () => Promise<Extract<FormAnswer, { to: string }>>
    screen: (state: FormState) => Promise<Screen | undefined>
  },
): Promise<FormAnswer> {
  try {
    return await spec.run()
  } catch (error) {
    if (!BaseplaneError.is(error) || error.status >= 500 || error.status === 404) throw error
    const fields = Object.fromEntries(spec.fields.map((name) => [name, input.field(name)]))
    const state = new FormState({ form: spec.form, fields, error: error.message, field: spec.fieldOf?.(error.message) })
    const screen = await spec.screen(state)
    if (!screen) throw error
    return { screen: { ...screen, status: 400 } }
  }
}
