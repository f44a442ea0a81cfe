// A form drawn again after a refusal keeps what the operator typed and puts
// the error beside the field it concerns (aria-describedby, aria-invalid).
import { BaseplaneError, Checks, FieldErrors } from '../../lib/errors.ts'
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
    return html`<p class="field-error" role="alert" id="${form}-${field}-error">${this.refusal!.errors[field]}</p>`
  }

  #mine(form: string, field: string): boolean {
    return this.refusal?.form === form && field in this.refusal.errors
  }
}

export { Checks, FieldErrors }

export const NO_STATE = new FormState()

/** A saved form's answer: back to a page with a notice. */
export type Saved = Extract<FormAnswer, { to: string }>

/** A form that may be refused: what it is called, which inputs it has, what it does and how its page is drawn. */
export interface FormSpec {
  /** The form's name in the page: its errors' ids are `{form}-{field}-error`. */
  form: string | ((input: FormInput) => string)
  /** Inputs drawn back as typed after a refusal, each with its error beside it. */
  fields?: string[]
  /** Inputs with their error beside them that are never drawn back (a password, a key). */
  secret?: string[]
  /** Where a refusal's field is drawn when the operation calls it otherwise (`additional_redirect_urls` -> `allow`). */
  names?: Record<string, string>
  run: (input: FormInput) => Promise<Saved>
  /** The page the form is on, drawn with a form's state. */
  screen: (input: FormInput, state: FormState) => Promise<Screen | undefined>
}

/**
 * The input a refusal is drawn beside: its field (`error.field`, renamed by
 * `names`) when the form has that input; otherwise the form's one input, or
 * with several, the form's button ('').
 */
export function placeOf(error: BaseplaneError, spec: Pick<FormSpec, 'fields' | 'secret' | 'names'>): string {
  const inputs = [...(spec.fields ?? []), ...(spec.secret ?? [])]
  const named = error.field === undefined ? undefined : (spec.names?.[error.field] ?? error.field)
  if (named !== undefined && inputs.includes(named)) return named
  return inputs.length === 1 ? inputs[0]! : ''
}

/**
 * A form's handler. Success: a redirect with the notice. A refusal (a
 * BaseplaneError below 500 other than 404): the page again with the typed
 * fields and the error beside the input it concerns (placeOf); several
 * refusals (FieldErrors, from Checks), each beside its own input.
 */
export function refusable(spec: FormSpec): (input: FormInput) => Promise<FormAnswer> {
  return async (input) => {
    try {
      return await spec.run(input)
    } catch (error) {
      if (!BaseplaneError.is(error) || error.status >= 500 || error.status === 404) throw error
      const form = typeof spec.form === 'string' ? spec.form : spec.form(input)
      const fields = Object.fromEntries((spec.fields ?? []).map((name) => [name, input.field(name)]))
      const errors: Record<string, string> = {}
      for (const one of error instanceof FieldErrors ? error.errors : [error]) {
        const place = placeOf(one, spec)
        errors[place] = errors[place] === undefined ? one.message : `${errors[place]} ${one.message}`
      }
      const screen = await spec.screen(input, new FormState({ form, fields, errors }))
      if (!screen) throw error
      return { screen: { ...screen, status: 400 } }
    }
  }
}
