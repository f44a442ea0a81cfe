// "did you mean": the command nearest to what was typed, by edit distance
// over the command's words (a swap of two neighbouring letters counts as one edit).
import type { Command } from './command.ts'

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions. */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1)
      rows[i]![j] = best
    }
  }
  return rows[a.length]![b.length]!
}

/**
 * The command whose words are nearest to the first words typed, if each word
 * is near enough to be a slip (one edit in three letters, at least one).
 * Returns the words typed that it replaces as well.
 */
export function nearestCommand(commands: Command[], typed: string[]): { command: Command; typed: string } | undefined {
  let best: { command: Command; typed: string; distance: number } | undefined
  for (const command of commands) {
    if (typed.length < command.words.length) continue
    const distances = command.words.map((word, i) => editDistance(typed[i]!, word))
    if (distances.some((distance, i) => distance > Math.max(1, Math.floor(command.words[i]!.length / 3)))) continue
    const distance = distances.reduce((sum, d) => sum + d, 0)
    if (!best || distance < best.distance) best = { command, typed: typed.slice(0, command.words.length).join(' '), distance }
  }
  return best && { command: best.command, typed: best.typed }
}
