// Small figures the benchmarks report.

/** The middle value (the upper middle of an even count); the input is left as it was. */
export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
}
