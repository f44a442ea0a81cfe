// The admin API's usage (issue 27 item 2): one project's month
// (`GET /projects/{ref}/usage?month=YYYY-MM`) and every project's month for a
// billing system (`GET /usage?month=YYYY-MM`), streamed as JSON lines, or as
// CSV with `Accept: text/csv` or `?format=csv`: a cursor batch at a time, so a
// month of 10,000 projects is never held whole (control-plane/usage.ts).
import { platformErrors } from '../../lib/errors.ts'
import type { ControlPlane } from '../control-plane.ts'
import { openUsageExport, projectUsage, USAGE_EXPORT_COLUMNS, usageCsvLine, type UsageExportRow } from '../usage.ts'
import { REF_PARAM, StreamedAnswer, type AdminRoute } from './route.ts'

export const JSON_LINES_TYPE = 'application/x-ndjson'
export const CSV_TYPE = 'text/csv; charset=utf-8'

/** `?month=`: absent means the current month; present, it must be one (an empty value is refused, not ignored). */
function monthOf(query: URLSearchParams): string | undefined {
  return query.has('month') ? query.get('month')! : undefined
}

/** `?format=csv|jsonl` first, else the Accept header (text/csv), else JSON lines. */
function exportFormat(query: URLSearchParams, accept: string | undefined): 'csv' | 'jsonl' {
  const format = query.get('format')
  if (format !== null) {
    if (format === 'csv' || format === 'jsonl') return format
    throw platformErrors.invalidArgument(`format must be csv or jsonl, got ${JSON.stringify(format.slice(0, 40))}`, 'format')
  }
  return accept !== undefined && /(^|,)\s*text\/csv\s*(;|,|$)/i.test(accept) ? 'csv' : 'jsonl'
}

/**
 * The export's batches as text chunks (one per batch, the CSV header first),
 * ending the batches when the chunks are ended, even before the first was
 * read, so the cursor's connection is never left behind.
 */
function chunksOf(batches: AsyncIterableIterator<UsageExportRow[]>, line: (row: UsageExportRow) => string, head: string | undefined): AsyncIterableIterator<string> {
  let pendingHead = head
  return {
    [Symbol.asyncIterator]() {
      return this
    },
    async next(): Promise<IteratorResult<string>> {
      if (pendingHead !== undefined) {
        const value = pendingHead
        pendingHead = undefined
        return { done: false, value }
      }
      const next = await batches.next()
      return next.done ? { done: true, value: undefined } : { done: false, value: next.value.map(line).join('') }
    },
    async return(): Promise<IteratorResult<string>> {
      await batches.return?.()
      return { done: true, value: undefined }
    },
  }
}

export function usageRoutes(controlPlane: ControlPlane): AdminRoute[] {
  return [
    {
      method: 'GET', access: 'read',
      path: '/projects/:ref/usage',
      where: REF_PARAM,
      handler: async ({ params, query }) => [200, await projectUsage(controlPlane, params.ref!, monthOf(query))],
    },
    {
      method: 'GET',
      path: '/usage',
      handler: async ({ query, headers }) => {
        const format = exportFormat(query, headers.accept)
        const { batches } = await openUsageExport(controlPlane, monthOf(query))
        return format === 'csv'
          ? new StreamedAnswer(CSV_TYPE, chunksOf(batches, (row) => `${usageCsvLine(row)}\r\n`, `${USAGE_EXPORT_COLUMNS.join(',')}\r\n`))
          : new StreamedAnswer(JSON_LINES_TYPE, chunksOf(batches, (row) => `${JSON.stringify(row)}\n`, undefined))
      },
    },
  ]
}
