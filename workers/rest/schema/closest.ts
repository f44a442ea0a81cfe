// PostgREST's "Perhaps you meant" hint: the nearest known name by edit
// distance. Its own module, as the schema model, the relationships and the
// planner all name the closest table, relationship or function.
/** The closest of `names` to `name` (PostgREST's fuzzy "Perhaps you meant"), or undefined when none is close. */
export function closest(name: string, names: Iterable<string>): string | undefined {
  let best: string | undefined
  let bestDistance = Infinity
  for (const candidate of names) {
    const d = distance(name, candidate)
    if (d < bestDistance) {
      bestDistance = d
      best = candidate
    }
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined
}

function distance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 8) return Infinity
  const row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const kept = row[j]!
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1))
      previous = kept
    }
  }
  return row[b.length]!
}
