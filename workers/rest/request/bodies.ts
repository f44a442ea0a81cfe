// The request bodies PostgREST 13 takes besides JSON
// (shared/reference/postgrest.md section 2, "Bodies"), decoded before a
// connection is taken: CSV (a header line of column names, then rows) and
// `application/x-www-form-urlencoded` (one row) become the same rows a JSON
// body gives, every value as text (or null), so the write path stays the one
// JSON path (write.ts: one JSON parameter PostgreSQL converts per column);
// and the bodies a function with one unnamed parameter takes whole
// (`text/plain`, `text/xml`, `application/octet-stream`, rpc.ts).
import { mediaTypeOf, OCTET_STREAM } from '../../../lib/http/body.ts'
import { restErrors } from '../errors.ts'

/** What the body is, by its Content-Type. */
export type BodyMedia = 'json' | 'csv' | 'form' | 'text' | 'xml' | 'binary'

export type BodyRow = Record<string, string | null>

/** A decoded body: its media, and for CSV and forms the rows it holds (JSON and the raw media stay text until planned). */
export interface DecodedBody {
  media: BodyMedia
  /** CSV: an array of rows; a form: one row. */
  payload?: BodyRow[] | BodyRow
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/
/** The media only a function of one unnamed parameter of that type takes (PostgREST's RawPay). */
const RAW: Record<string, BodyMedia> = { 'text/plain': 'text', 'text/xml': 'xml', [OCTET_STREAM]: 'binary' }

/**
 * The body of a request that has one, decoded as PostgREST decodes it. No
 * Content-Type is JSON; a function call (`rpc`) also takes the raw media;
 * anything else is PGRST102 "Content-Type not acceptable".
 */
export function decodeBody(contentType: string | undefined, body: string, rpc: boolean): DecodedBody {
  const type = mediaTypeOf(contentType)
  if (type === '' || JSON_TYPE.test(type)) return { media: 'json' }
  if (type === 'text/csv') return { media: 'csv', payload: csvRows(body) }
  if (type === 'application/x-www-form-urlencoded') return { media: 'form', payload: formRow(body) }
  const raw = RAW[type]
  if (raw !== undefined && rpc) return { media: raw }
  // Named as sent (its letter case kept), as PostgREST's message names it.
  throw restErrors.contentType((contentType ?? '').split(';')[0]!.trim())
}

/** A form's pairs as one row, values as text; a key given twice keeps its last value (PostgREST's map). */
export function formRow(body: string): BodyRow {
  const row: BodyRow = {}
  for (const [key, value] of new URLSearchParams(body)) row[key] = value
  return row
}

/** The text of a CSV field that means SQL null, when not quoted (quoted, it is the text). */
const NULL_TEXT = 'NULL'

interface Field {
  text: string
  quoted: boolean
}

const parseError = (what: string) => restErrors.invalidBody(`parse error (${what})`)

/**
 * RFC 4180 records: fields separated by commas, records by CRLF, LF or CR,
 * a field in double quotes may hold commas, line breaks and `""` (one quote).
 * Blank lines are skipped, as PostgREST's CSV reader skips them; a byte order
 * mark before the header is dropped (spreadsheets write one).
 */
function records(text: string): Field[][] {
  const out: Field[][] = []
  let record: Field[] = []
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0
  let line = 1
  const n = text.length
  // Each turn reads one field and what ends it.
  for (;;) {
    let field: Field
    if (text[i] === '"') {
      const opened = line
      let value = ''
      i++
      for (;;) {
        const quote = text.indexOf('"', i)
        if (quote === -1) throw parseError(`unterminated quoted field starting on line ${opened}`)
        const chunk = text.slice(i, quote)
        value += chunk
        for (const c of chunk) if (c === '\n') line++
        if (text[quote + 1] === '"') {
          value += '"'
          i = quote + 2
        } else {
          i = quote + 1
          break
        }
      }
      field = { text: value, quoted: true }
      if (i < n && text[i] !== ',' && text[i] !== '\n' && text[i] !== '\r') throw parseError(`text after a closing quote on line ${line}`)
    } else {
      let end = i
      while (end < n && text[end] !== ',' && text[end] !== '\n' && text[end] !== '\r') {
        if (text[end] === '"') throw parseError(`a quote inside an unquoted field on line ${line}`)
        end++
      }
      field = { text: text.slice(i, end), quoted: false }
      i = end
    }
    record.push(field)
    if (i < n && text[i] === ',') {
      i++
      continue
    }
    // The end of a record: a line break or the end of the text.
    const blank = record.length === 1 && !record[0]!.quoted && record[0]!.text === ''
    if (!blank) out.push(record)
    record = []
    if (i >= n) return out
    if (text[i] === '\r' && text[i + 1] === '\n') i++
    i++
    line++
    if (i >= n) return out
  }
}

/**
 * A CSV body as PostgREST 13 reads it: the first line names the columns, each
 * later line is a row of text values (unquoted `NULL` is null). Every row has
 * as many fields as the header, else PGRST102 in PostgREST's words; a body
 * with no header is PostgREST's (cassava's) "not enough input".
 */
export function csvRows(text: string): BodyRow[] {
  const [header, ...rows] = records(text)
  if (header === undefined) throw parseError('not enough input')
  const names = header.map((f) => f.text)
  return rows.map((fields) => {
    if (fields.length !== names.length) throw restErrors.invalidBody('All lines must have same number of fields')
    const row: BodyRow = {}
    names.forEach((name, k) => {
      const field = fields[k]!
      row[name] = !field.quoted && field.text === NULL_TEXT ? null : field.text
    })
    return row
  })
}
