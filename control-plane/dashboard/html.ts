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

// Greys are #5b6570 or darker on white (5.9:1), above WCAG's 4.5:1 for text.
// Tables scroll inside their .scroll box, so a phone's 375px never scrolls the page sideways; a long
// list's (table.stacked) rows become a few lines each there, cut with an ellipsis, not columns wrapped
// to a word a line (a page of the push delivery log was 15,000 px tall at 390 px).
const STYLE = `
body{font:15px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1b1f24}
header.top{background:#1b1f24;color:#fff;padding:.7rem 1.5rem;display:flex;justify-content:space-between;align-items:center;gap:1rem}
header.top a{color:#fff;text-decoration:none;font-weight:600}
main{max-width:64rem;margin:1.5rem auto;padding:0 1rem}
section{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:1rem 1.25rem;margin-bottom:1rem;min-width:0}
h1{font-size:1.4rem;overflow-wrap:anywhere}h2{font-size:1.1rem;margin-top:0}h3{font-size:1rem}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #eceff2;vertical-align:top}
code,textarea,input[type=text],input[type=url],input[type=password],input[type=email],input[type=search]{font-family:ui-monospace,monospace;font-size:13px}
code{overflow-wrap:anywhere}code.key{word-break:break-all}
input[type=text],input[type=url],input[type=password],input[type=email],input[type=search],input[type=number],textarea,select{width:100%;box-sizing:border-box;padding:.35rem;border:1px solid #8a939e;border-radius:4px}
input[aria-invalid=true],textarea[aria-invalid=true]{border-color:#b3261e;outline:1px solid #b3261e}
textarea{min-height:8rem}
button,.button{padding:.4rem .9rem;border-radius:4px;border:1px solid #2d6cdf;background:#2d6cdf;color:#fff;cursor:pointer;font:inherit;text-decoration:none;display:inline-block}
button.secondary{background:#fff;color:#1f56b8}button.danger{background:#b3261e;border-color:#b3261e}
button.copy{padding:.1rem .5rem;font-size:13px;margin-left:.4rem}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:.75rem}
.card{border:1px solid #dde1e6;border-radius:6px;padding:.75rem;min-width:0}
.on{color:#1b7f3b;font-weight:600}.off{color:#5b6570;font-weight:600}.muted{color:#5b6570}
.notice{background:#e8f2ff;border:1px solid #b6d3ff;padding:.5rem .75rem;border-radius:6px;margin-bottom:1rem}
.error{background:#fdecea;border:1px solid #f5c2bd;padding:.5rem .75rem;border-radius:6px;margin-bottom:1rem}
.field-error{color:#b3261e;font-weight:600;margin:.25rem 0}
.empty{border:1px dashed #8a939e;border-radius:6px;padding:.75rem;color:#3d4650}
form.inline{display:inline}label{display:block;margin:.5rem 0 .2rem;font-weight:600}label.check{font-weight:400}
nav.tabs{display:flex;flex-wrap:wrap;gap:.25rem;margin:.5rem 0 1rem;border-bottom:1px solid #dde1e6}
nav.tabs a{padding:.4rem .8rem;text-decoration:none;color:#1f56b8;border-radius:6px 6px 0 0}
nav.tabs a[aria-current=page]{background:#fff;border:1px solid #dde1e6;border-bottom-color:#fff;color:#1b1f24;font-weight:600;margin-bottom:-1px}
.project-head{display:flex;flex-wrap:wrap;align-items:baseline;gap:.5rem 1rem}.project-head h1{margin:.2rem 0}
.row{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(18rem,1fr));gap:.75rem}
.chart{min-height:12rem;overflow:hidden}
pre{background:#f6f7f9;border:1px solid #dde1e6;border-radius:4px;padding:.5rem;overflow:auto;max-height:30rem;font-size:13px}
ul.types{display:flex;flex-wrap:wrap;gap:.25rem;list-style:none;padding:0;max-height:24rem;overflow:auto}
.explorer{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:.75rem}
@media (max-width:40rem){.explorer{grid-template-columns:minmax(0,1fr)}header.top{padding:.7rem 1rem}}
@media (max-width:40rem){
table.stacked thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
table.stacked,table.stacked tbody{display:block}table.stacked caption{display:block;text-align:left}
table.stacked tr{display:flex;flex-wrap:wrap;align-items:baseline;gap:0 .6rem;padding:.35rem 0;border-bottom:1px solid #eceff2;font-size:13px}
table.stacked td{display:block;padding:0;border:0;min-width:0;max-width:100%}
table.stacked td.line,table.stacked td.half,table.stacked td.rest{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
table.stacked td.line{flex:1 0 100%}table.stacked td.half{flex:1 1 40%}table.stacked td.rest{flex:1 1 8rem}
table.stacked td.lines{flex:1 0 100%;display:-webkit-box;-webkit-box-orient:vertical;-webkit-line-clamp:2;overflow:hidden}
table.stacked td[data-label]::before{content:attr(data-label) " ";color:#5b6570}
table.stacked td code{overflow-wrap:normal}
}
`

export interface Tab {
  id: string
  label: string
  path: string
}

export interface LayoutOptions {
  signedIn: boolean
  notice?: string
  /** An error not tied to one field (a refused field's error shows beside it instead). */
  error?: string
  /** The project whose header and tabs frame the page. */
  project?: { name: string; ref: string; tabs: Tab[]; current?: string }
  /** Scripts served from /dashboard/assets/ this page needs besides dashboard.js. */
  scripts?: string[]
  styles?: string[]
  /** Origins the page's scripts open sockets to, besides the dashboard's own (the page's Content-Security-Policy). */
  connect?: string[]
}

function projectHeader(project: NonNullable<LayoutOptions['project']>): Safe {
  return html`<div class="project-head"><h1 id="project-name">${project.name}</h1><span>ref <code id="project-ref">${project.ref}</code></span>
<a href="/dashboard">All projects</a></div>
<nav class="tabs" aria-label="Project">${project.tabs.map(
    (tab) => html`<a href="/dashboard${tab.path}" ${tab.id === project.current ? new Safe('aria-current="page"') : ''}>${tab.label}</a>`,
  )}</nav>`
}

export function page(title: string, body: Safe, options: LayoutOptions): string {
  const heading = options.project ? `${title} · ${options.project.name}` : title
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${heading} · Baseplane</title><style>${new Safe(STYLE)}</style>${(options.styles ?? []).map(
    (name) => html`<link rel="stylesheet" href="/dashboard/assets/${name}">`,
  )}<script src="/dashboard/assets/dashboard.js" defer></script>${(options.scripts ?? []).map((name) => html`<script src="/dashboard/assets/${name}" defer></script>`)}</head>
<body><header class="top"><a href="/dashboard">Baseplane</a>${
    options.signedIn ? html`<form class="inline" method="post" action="/dashboard/logout"><button class="secondary">Sign out</button></form>` : ''
  }</header>
<main>${options.project ? projectHeader(options.project) : ''}${options.notice ? html`<div class="notice" role="status">${options.notice}</div>` : ''}${
    options.error ? html`<div class="error" role="alert">${options.error}</div>` : ''
  }${body}</main></body></html>`.text
}

/** A value with a copy button (dashboard.js copies the element named by data-copy). */
export function copyable(id: string, value: string, label: string): Safe {
  return html`<code class="key" id="${id}">${value}</code><button type="button" class="copy secondary" data-copy="${id}" aria-label="Copy ${label}">Copy</button>`
}

/**
 * A table that scrolls inside its box at narrow widths; `stacked`, one whose
 * rows become a few lines each on a phone instead (its cells say how: class
 * `line` one line cut with an ellipsis, `half` half of one, `rest` what is
 * left of one, `lines` at most two; `data-label` names a cell there, `title`
 * holds what is cut).
 */
export function table(head: string[], rows: Safe[], caption?: string, options: { stacked?: boolean } = {}): Safe {
  return html`<div class="scroll"><table${options.stacked ? html` class="stacked"` : ''}>${caption ? html`<caption class="muted">${caption}</caption>` : ''}<thead><tr>${head.map(
    (h) => html`<th scope="col">${h}</th>`,
  )}</tr></thead><tbody>${rows}</tbody></table></div>`
}

/** What to do when a list is empty. */
export function empty(text: Safe | string): Safe {
  return html`<div class="empty">${text}</div>`
}
