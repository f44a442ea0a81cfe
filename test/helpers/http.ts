// Small HTTP client for tests that need full control of headers (Host included).
import http from 'node:http'

/** The body a test expects: `json` is the decoded body, read as that shape (the test asserts it). */
export interface Reply<T = unknown> {
  status: number
  headers: http.IncomingHttpHeaders
  text: string
  json: T
}

/** The error body of the platform, the admin API and the services. */
export interface ErrorBody {
  code: string
  message: string
  hint?: string
}

/** `options.sent` is called once the whole request is handed to the operating system. */
export function request<T = unknown>(url: string, options: { method?: string; headers?: Record<string, string>; body?: string | object; sent?: () => void } = {}): Promise<Reply<T>> {
  const body = typeof options.body === 'object' ? JSON.stringify(options.body) : options.body
  const headers: Record<string, string> = { ...(options.headers ?? {}) }
  if (body !== undefined) {
    headers['content-type'] ??= 'application/json'
    headers['content-length'] = String(Buffer.byteLength(body))
  }
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? (body === undefined ? 'GET' : 'POST'), headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let json: unknown
        try {
          json = text ? JSON.parse(text) : undefined
        } catch {
          json = undefined
        }
        resolve({ status: res.statusCode!, headers: res.headers, text, json: json as T })
      })
    })
    req.on('error', reject)
    if (options.sent) req.on('finish', options.sent)
    if (body !== undefined) req.write(body)
    req.end()
  })
}
