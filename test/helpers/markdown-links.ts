// Relative links in the repository's Markdown (issue 37 item 7): which pages there are,
// the links each writes, the anchors GitHub makes for its headings, and the links that
// lead nowhere. Only what GitHub renders counts: fenced code and inline code hold no
// links or headings.
import fs from 'node:fs'
import path from 'node:path'

/** Folders never walked: packages, builds, the platform home, git's and tools' own. */
const SKIPPED = new Set(['node_modules', 'dist'])

/** A link that leads nowhere: the page it is written in, its line, the target as written, why. */
export interface BrokenLink {
  file: string
  line: number
  target: string
  reason: string
}

/**
 * The pages whose links are checked, relative to `root`: README.md, every page under docs/,
 * and every folder's README.md (bench/README.md among them).
 */
export function markdownPages(root: string): string[] {
  const pages = new Set<string>()
  const walk = (folder: string, underDocs: boolean): void => {
    for (const entry of fs.readdirSync(path.join(root, folder), { withFileTypes: true })) {
      if (entry.name.startsWith('.') || SKIPPED.has(entry.name)) continue
      const relative = folder === '' ? entry.name : `${folder}/${entry.name}`
      if (entry.isDirectory()) walk(relative, underDocs || relative === 'docs')
      else if (entry.name === 'README.md' || (underDocs && entry.name.endsWith('.md'))) pages.add(relative)
    }
  }
  walk('', false)
  return [...pages].sort()
}

/** The text as GitHub reads it for links and headings: fenced blocks and code spans blanked, lines kept. */
function withoutCode(text: string): string[] {
  let fence: string | undefined
  return text.split('\n').map((line) => {
    const opening = /^ {0,3}(`{3,}|~{3,})/.exec(line)
    if (fence !== undefined) {
      if (opening && opening[1]!.startsWith(fence)) fence = undefined
      return ''
    }
    if (opening) {
      fence = opening[1]!
      return ''
    }
    return line.replace(/(`+)(.+?)\1/g, (span) => ' '.repeat(span.length))
  })
}

/** Every `[text](target)` link of the page, with its line; images too (`![alt](target)`). */
export function markdownLinks(text: string): Array<{ line: number; target: string }> {
  const links: Array<{ line: number; target: string }> = []
  withoutCode(text).forEach((line, index) => {
    for (const match of line.matchAll(/\]\(\s*<?([^()\s<>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ line: index + 1, target: match[1]! })
    }
  })
  return links
}

/**
 * GitHub's anchor for a heading (github-slugger): the rendered text lower-cased, every character
 * that is not a letter, a digit, `-`, `_` or a space dropped, spaces made hyphens.
 */
export function headingSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
  return rendered.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-')
}

/** The anchors of a page's headings, a repeated one numbered as GitHub numbers it (`-1`, `-2`). */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  let fence: string | undefined
  for (const line of text.split('\n')) {
    const opening = /^ {0,3}(`{3,}|~{3,})/.exec(line)
    if (fence !== undefined) {
      if (opening && opening[1]!.startsWith(fence)) fence = undefined
      continue
    }
    if (opening) {
      fence = opening[1]!
      continue
    }
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (!heading) continue
    const slug = headingSlug(heading[1]!)
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    anchors.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return anchors
}

/** Links GitHub would not leave on the web: http(s) and mailto are not checked. */
function external(target: string): boolean {
  return /^(https?:|mailto:)/i.test(target)
}

/**
 * The relative links of `file` (relative to `root`) that lead nowhere: a path that does not
 * exist, or an `#anchor` into a Markdown page that has no heading of that anchor.
 */
export function brokenLinks(root: string, file: string): BrokenLink[] {
  const text = fs.readFileSync(path.join(root, file), 'utf8')
  const broken: BrokenLink[] = []
  for (const { line, target } of markdownLinks(text)) {
    if (external(target)) continue
    const hash = target.indexOf('#')
    const linked = hash === -1 ? target : target.slice(0, hash)
    const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1))
    const destination = linked === '' ? file : path.normalize(path.join(path.dirname(file), decodeURIComponent(linked)))
    if (destination.startsWith('..')) {
      broken.push({ file, line, target, reason: 'leads out of the repository' })
      continue
    }
    const full = path.join(root, destination)
    if (!fs.existsSync(full)) {
      broken.push({ file, line, target, reason: `${destination} does not exist` })
      continue
    }
    if (anchor === undefined || !destination.endsWith('.md') || fs.statSync(full).isDirectory()) continue
    if (!headingAnchors(fs.readFileSync(full, 'utf8')).has(anchor)) {
      broken.push({ file, line, target, reason: `${destination} has no heading #${anchor}` })
    }
  }
  return broken
}
