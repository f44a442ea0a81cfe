// The documentation's links lead somewhere (issue 37 item 7, DECISIONS "The house, third
// floor"): in README.md, every page under docs/, bench/README.md and every folder's README,
// each relative link `[x](path)` names a file that exists, and each `[x](path#anchor)` into a
// Markdown page names one of its headings by GitHub's anchor. http(s) and mailto links are
// not followed.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { brokenLinks, headingAnchors, headingSlug, markdownLinks, markdownPages } from '../helpers/markdown-links.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')

t.test('the pages checked include the README, docs/, bench/ and the folder READMEs', async (t) => {
  const pages = markdownPages(ROOT)
  for (const page of ['README.md', 'docs/README.md', 'docs/operator-guide.md', 'bench/README.md', 'lib/README.md', 'workers/auth/README.md', 'cli/README.md']) {
    t.ok(pages.includes(page), `${page} is checked`)
  }
  t.notOk(pages.some((page) => page.includes('node_modules')), 'no page of an installed package')
  t.ok(pages.filter((page) => page.startsWith('docs/')).length >= 10, 'docs/ has its pages')
})

t.test('every relative link of the documentation resolves', async (t) => {
  const broken = markdownPages(ROOT).flatMap((page) => brokenLinks(ROOT, page))
  t.same(broken.map((link) => `${link.file}:${link.line}: (${link.target}) ${link.reason}`), [], 'no broken link')
})

t.test("GitHub's anchors for the headings the pages use", async (t) => {
  t.equal(headingSlug('Push (`{base_url}/push/v1`)'), 'push-base_urlpushv1')
  t.equal(headingSlug("The client's address"), 'the-clients-address')
  t.equal(headingSlug('When something fails, and how long it takes to heal'), 'when-something-fails-and-how-long-it-takes-to-heal')
  t.equal(headingSlug('`npm run bench:fleet`'), 'npm-run-benchfleet')
  t.equal(headingSlug('Native sign-in with Google (`grant_type=id_token`)'), 'native-sign-in-with-google-grant_typeid_token')
  t.same([...headingAnchors('# A\n\n## Usage\n\n```sh\n# not a heading\n```\n\n### Usage\n')], ['a', 'usage', 'usage-1'], 'a repeated heading is numbered; code holds none')
})

t.test('links in code are not links; external ones are not followed', async (t) => {
  const text = 'See [a](a.md) and `[b](b.md)`.\n\n```md\n[c](c.md)\n```\n[d](https://example.com/x) [e](mailto:x@y.z)\n'
  t.same(markdownLinks(text).map((link) => link.target), ['a.md', 'https://example.com/x', 'mailto:x@y.z'])
})

t.test('a broken link is found: a missing page, a missing anchor, a way out', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bp-docs-links-'))
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
  fs.mkdirSync(path.join(root, 'docs'))
  fs.writeFileSync(path.join(root, 'docs/guide.md'), '# Guide\n\n## Running a fleet\n')
  fs.writeFileSync(path.join(root, 'README.md'), [
    '[fine](docs/guide.md#running-a-fleet) [here](#readme) [web](https://example.com/nowhere)',
    '[gone](docs/missing.md)',
    '[no heading](docs/guide.md#running-a-ship)',
    '[out](../elsewhere.md)',
    '# Readme',
  ].join('\n'))
  t.same(markdownPages(root), ['README.md', 'docs/guide.md'])
  t.same(brokenLinks(root, 'README.md').map((link) => [link.line, link.target, link.reason]), [
    [2, 'docs/missing.md', 'docs/missing.md does not exist'],
    [3, 'docs/guide.md#running-a-ship', 'docs/guide.md has no heading #running-a-ship'],
    [4, '../elsewhere.md', 'leads out of the repository'],
  ])
  t.same(brokenLinks(root, 'docs/guide.md'), [], 'a page without links has none broken')
})
