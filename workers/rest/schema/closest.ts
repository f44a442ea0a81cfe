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

/**
 * The most similar of `names` to `name` scoring at least `minScore`, the
 * score being 1 - edit distance / the longer length, of the lower-cased
 * texts: the Levenshtein score PostgREST's fuzzy set ranks by. Used where
 * PostgREST's threshold matters (a function's parameter lists: 0.33).
 */
export function mostSimilar(name: string, names: Iterable<string>, minScore: number): string | undefined {
  let best: string | undefined
  let bestScore = -Infinity
  const wanted = name.toLowerCase()
  for (const candidate of names) {
    const longer = Math.max(wanted.length, candidate.length)
    const score = longer === 0 ? 1 : 1 - distance(wanted, candidate.toLowerCase()) / longer
    if (score > bestScore) {
      bestScore = score
      best = candidate
    }
  }
  return best !== undefined && bestScore >= minScore ? best : undefined
}
