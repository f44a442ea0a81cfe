// A prom-client histogram whose series are read, at scrape time, from
// histograms counted elsewhere (project-figures.ts's typed arrays, copied by
// figures-packet.ts) instead of observed through prom-client: its observe()
// hashes a label object per call, too dear for every request on the main thread. Only get() and
// getForPromString() (what the registry calls to write the text) are replaced;
// the name, help, type and the registry's formatting stay prom-client's.
import { Histogram as PromHistogram } from 'prom-client'
import type { HistogramFigures } from './figures-packet.ts'

export interface HistogramSeries {
  labels: Record<string, string>
  histogram: HistogramFigures
}

export interface SnapshotHistogramOptions {
  name: string
  help: string
  labelNames: readonly string[]
  buckets: readonly number[]
  registers: NonNullable<ConstructorParameters<typeof PromHistogram>[0]['registers']>
  read: () => Iterable<HistogramSeries>
}

type Exported = Awaited<ReturnType<PromHistogram['get']>>

export class SnapshotHistogram extends PromHistogram {
  readonly #read: () => Iterable<HistogramSeries>
  readonly #bounds: readonly number[]
  readonly #name: string
  readonly #help: string

  constructor(options: SnapshotHistogramOptions) {
    super({ name: options.name, help: options.help, labelNames: options.labelNames, buckets: [...options.buckets], registers: options.registers })
    this.#read = options.read
    this.#bounds = options.buckets
    this.#name = options.name
    this.#help = options.help
  }

  override async get(): Promise<Exported> {
    return this.#export()
  }

  /** What prom-client's registry prefers to get() when it writes the text format. */
  async getForPromString(): Promise<Exported> {
    return this.#export()
  }

  #export(): Exported {
    const values: Exported['values'] = []
    const name = this.#name
    for (const { labels, histogram } of this.#read()) {
      if (histogram.count === 0) continue
      let cumulative = 0
      this.#bounds.forEach((bound, i) => {
        cumulative += histogram.counts[i]!
        values.push({ labels: { ...labels, le: bound }, value: cumulative, metricName: `${name}_bucket` })
      })
      values.push({ labels: { ...labels, le: '+Inf' }, value: histogram.count, metricName: `${name}_bucket` })
      values.push({ labels, value: histogram.sum, metricName: `${name}_sum` })
      values.push({ labels, value: histogram.count, metricName: `${name}_count` })
    }
    // prom-client's typings declare `type` as an enum and require `collect`; at run time the registry
    // reads the string 'histogram' (as its own Histogram.get() returns) and no collect.
    return { name, help: this.#help, type: 'histogram', values, aggregator: 'sum' } as unknown as Exported
  }
}
