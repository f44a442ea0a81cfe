// What a saved form changed, said one way for every form: `changes` compares
// the stored values with the submitted ones and names each that differs (a
// switch as `name:on` or `name:off`), which the form's redirect carries as
// notice values; `savedNotice` words them for the notice.
import { NEXT_REQUEST } from './module.ts'

/** A value a form submits or a setting holds; lists are compared entry by entry. */
export type Value = string | number | boolean | null | undefined | readonly string[]

function same(a: Value, b: Value): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((entry, i) => entry === b[i])
  return a === b
}

/** The names of the submitted values (`after`'s keys, in order) that differ from the stored ones. */
export function changedNames(before: Readonly<Record<string, Value>>, after: Readonly<Record<string, Value>>): string[] {
  return Object.keys(after).filter((name) => !same(before[name], after[name]))
}

/** What changed as notice values: each changed name, a switch's with `:on` or `:off`. */
export function changes(before: Readonly<Record<string, Value>>, after: Readonly<Record<string, Value>>): string[] {
  return changedNames(before, after).map((name) => (typeof after[name] === 'boolean' ? `${name}:${after[name] ? 'on' : 'off'}` : name))
}

/** "<what> saved: <what changed, in words>. It applies from the next request.", or that nothing changed. */
export function savedNotice(what: string, values: string[], words: Readonly<Record<string, string>>): string {
  const said = values.map((value) => words[value]).filter(Boolean)
  return said.length === 0 ? `${what} saved; nothing changed.` : `${what} saved: ${said.join(', ')}. ${NEXT_REQUEST}`
}
