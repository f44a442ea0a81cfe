// HTML building for the dashboard: every interpolated value is escaped by
// `html` unless it is itself the result of `html` (a Safe).
export class Safe {
  readonly text: string
  constructor(text: string) {
    this.text = text
  }
  toString(): string {
    return this.text
  }
}

export function escape(value: unknown): string {
  return String(value ?? '')
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;')
}

type Part = Safe | string | number | boolean | null | undefined | Part[]

function render(part: Part): string {
  if (Array.isArray(part)) return part.map(render).join('')
  if (part instanceof Safe) return part.text
  return escape(part)
}

export function html(strings: TemplateStringsArray, ...parts: Part[]): Safe {
  let out = strings[0]!
  parts.forEach((part, i) => {
    out += render(part) + strings[i + 1]!
  })
  return new Safe(out)
}

const STYLE = `
body{font:15px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1b1f24}
header{background:#1b1f24;color:#fff;padding:.7rem 1.5rem;display:flex;justify-content:space-between;align-items:center}
header a{color:#fff;text-decoration:none;font-weight:600}
main{max-width:60rem;margin:1.5rem auto;padding:0 1rem}
section{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:1rem 1.25rem;margin-bottom:1rem}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:0}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #eceff2;vertical-align:top}
code,textarea,input[type=text],input[type=url],input[type=password]{font-family:ui-monospace,monospace;font-size:13px}
code.key{word-break:break-all}
input[type=text],input[type=url],input[type=password],textarea,select{width:100%;box-sizing:border-box;padding:.35rem;border:1px solid #c5cbd3;border-radius:4px}
textarea{min-height:8rem}
button{padding:.4rem .9rem;border-radius:4px;border:1px solid #2d6cdf;background:#2d6cdf;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#2d6cdf}button.danger{background:#c62828;border-color:#c62828}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:.75rem}
.card{border:1px solid #dde1e6;border-radius:6px;padding:.75rem}
.on{color:#1b7f3b;font-weight:600}.off{color:#8a939e;font-weight:600}
.notice{background:#e8f2ff;border:1px solid #b6d3ff;padding:.5rem .75rem;border-radius:6px;margin-bottom:1rem}
.error{background:#fdecea;border:1px solid #f5c2bd;padding:.5rem .75rem;border-radius:6px;margin-bottom:1rem}
form.inline{display:inline}label{display:block;margin:.5rem 0 .2rem;font-weight:600}
`

export function page(title: string, body: Safe, options: { signedIn: boolean; notice?: string; error?: string }): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title} · Baseplane</title><style>${new Safe(STYLE)}</style></head>
<body><header><a href="/dashboard">Baseplane</a>${
    options.signedIn ? html`<form class="inline" method="post" action="/dashboard/logout"><button class="secondary">Sign out</button></form>` : ''
  }</header>
<main>${options.notice ? html`<div class="notice" role="status">${options.notice}</div>` : ''}${
    options.error ? html`<div class="error" role="alert">${options.error}</div>` : ''
  }${body}</main></body></html>`.text
}
