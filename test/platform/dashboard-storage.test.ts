// The Storage tab in headless Chromium: the project's figures and buckets, a
// bucket browsed folder by folder, a file downloaded through its signed link
// and one uploaded straight to the project's Storage API (and one its
// bucket's types refuse, with Storage's reason), an object removed, a bucket
// made (and a refused size limit shown beside its input), its settings
// changed, and the policies on storage.objects listed.
import t from 'tap'
import { ownerOf, serviceClient } from '../storage/helpers.ts'
import { dashboardSession, haveChromium } from './dashboard-browser.ts'

if (haveChromium(t)) {
  const { platform, page, dashboard, offsite, text, signIn } = await dashboardSession(t, 'dashboard-storage')
  const project = await platform.createProject({ name: 'Files' })
  const admin = serviceClient(project)
  await admin.storage.createBucket('photos', { public: false, fileSizeLimit: '5MB' })
  for (const [key, body] of [
    ['cover.txt', 'the cover'],
    ['2024/trip.txt', 'a trip'],
  ] as const) {
    const { error } = await admin.storage.from('photos').upload(key, new Blob([body], { type: 'text/plain' }))
    if (error) throw error
  }
  const owner = await ownerOf(t, project)
  await owner.query(`create policy "own files" on storage.objects for select to authenticated using (owner_id = (select auth.uid()::text))`)
  const tab = `${dashboard}/projects/${project.ref}/storage`
  const row = (bucket: string) => `#st-bucket-list tr[data-bucket="${bucket}"]`

  t.test('the figures, the buckets and the policies', async (t) => {
    await signIn()
    await page.goto(tab)
    t.equal(await text('nav.tabs a[aria-current=page]'), 'Storage')
    t.equal(await text('#st-objects'), '2')
    t.equal(await text('#st-buckets'), '1')
    t.equal(await text('#st-bytes'), `${'the cover'.length + 'a trip'.length} bytes`)
    t.match(await text(row('photos')), /photos\s+no\s+5\.0 MB\s+any\s+2\s+15 bytes/)
    t.match(await text('#st-policy-list'), /storage\.objects\s+own files\s+SELECT\s+authenticated/)
    t.match(await text('#st-policies + p'), "Access through the Storage API is the project's row-level security")
    await page.setViewportSize({ width: 390, height: 844 })
    await page.goto(tab)
    const width = await page.evaluate(() => document.documentElement.scrollWidth)
    t.ok(width <= 390, `the tab fits a phone: ${width} px wide at 390x844`)
    await page.setViewportSize({ width: 1280, height: 800 })
  })

  t.test('a bucket browsed by folder, a file downloaded through its link', async (t) => {
    await page.goto(tab)
    await page.click(`${row('photos')} a`)
    t.match(await text('#st-browse'), 'Bucket photos')
    t.match(await text('#st-entries'), /2024\/\s+folder[\s\S]*cover\.txt\s+text\/plain\s+9 bytes/)
    await page.click('#st-entries a:has-text("2024/")')
    t.match(await text('#st-path'), 'photos / 2024')
    const link = await page.locator('#st-entries tr[data-key="2024/trip.txt"] a:has-text("Download")').getAttribute('href')
    t.match(link, `${project.baseUrl}/storage/v1/object/sign/photos/2024/trip.txt?token=`)
    const got = await page.evaluate(async (href) => {
      const answer = await fetch(href!)
      return { status: answer.status, body: await answer.text(), disposition: answer.headers.get('content-disposition') }
    }, link)
    t.match(got, { status: 200, body: 'a trip', disposition: /attachment/ })
  })

  t.test("a file uploaded to the folder shown, straight to the project's Storage API", async (t) => {
    await page.goto(`${tab}?bucket=photos&prefix=2024/`)
    await page.setInputFiles('#st-file', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('uploaded from the dashboard') })
    await page.click('#st-upload-button')
    await page.waitForSelector('.notice')
    t.equal(await text('.notice'), 'The file was uploaded.')
    t.match(await text('#st-path'), 'photos / 2024', 'still in the folder')
    t.match(await text('#st-entries'), /notes\.txt\s+text\/plain\s+27 bytes/)
    const { data } = await admin.storage.from('photos').download('2024/notes.txt')
    t.equal(await data?.text(), 'uploaded from the dashboard')
    // The same name again is refused unless replacing is asked for.
    await page.goto(`${tab}?bucket=photos&prefix=2024/`)
    await page.setInputFiles('#st-file', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('again') })
    await page.click('#st-upload-button')
    await page.waitForSelector('#st-upload-problem:not([hidden])')
    t.match(await text('#st-upload-problem'), 'Storage refused the upload: The resource already exists')
    await page.check('#st-upsert')
    await Promise.all([page.waitForURL(/done=storage_uploaded/), page.click('#st-upload-button')])
    await page.waitForSelector('.notice')
    t.equal(await (await admin.storage.from('photos').download('2024/notes.txt')).data?.text(), 'again')
  })

  t.test('an object removed, with its bytes', async (t) => {
    await page.goto(`${tab}?bucket=photos&prefix=2024/`)
    await page.click('#st-entries tr[data-key="2024/trip.txt"] button:has-text("Remove")')
    await page.waitForSelector('.notice')
    t.equal(await text('.notice'), 'The object was removed, and its bytes with it.')
    t.notMatch(await text('#st-entries'), 'trip.txt')
    const { error } = await admin.storage.from('photos').download('2024/trip.txt')
    t.ok(error, 'the API no longer has it')
  })

  t.test('a bucket made, a refused limit shown beside its input, its settings changed', async (t) => {
    await page.goto(tab)
    await page.fill('#st-new-name', 'avatars')
    await page.check('#st-new-public')
    await page.fill('#st-new-limit', 'lots')
    await page.click('button:has-text("Make bucket")')
    t.match(await text('#bucket_new-file_size_limit-error'), 'file_size_limit must be a number of bytes')
    t.equal(await page.inputValue('#st-new-name'), 'avatars', 'what was typed is kept')
    t.ok(await page.isChecked('#st-new-public'), 'the switch as it was')
    await page.fill('#st-new-limit', '1MB')
    await page.fill('#st-new-types', 'image/png, image/*')
    await page.click('button:has-text("Make bucket")')
    t.equal(await text('.notice'), "Bucket avatars made. The project's policies decide who may use it through the API; the service role always may.")
    t.match(await text(row('avatars')), /avatars\s+yes\s+1\.0 MB\s+image\/png, image\/\*\s+0\s+0 bytes/)
    t.match(await text('#st-browse'), 'Bucket avatars', 'the new bucket is shown')
    // Its types refuse a text file, in Storage's words.
    await page.setInputFiles('#st-file', { name: 'note.txt', mimeType: 'text/plain', buffer: Buffer.from('no') })
    await page.click('#st-upload-button')
    await page.waitForSelector('#st-upload-problem:not([hidden])')
    t.match(await text('#st-upload-problem'), 'mime type text/plain is not supported')
    await page.uncheck('#st-settings-public')
    await page.fill('#st-settings-limit', '')
    await page.fill('#st-settings-types', '')
    await page.click('button:has-text("Save settings")')
    t.equal(await text('.notice'), 'Settings of bucket avatars saved. They apply from the next upload.')
    t.match(await text(row('avatars')), /avatars\s+no\s+the plan's\s+any/)
    const { data } = await admin.storage.getBucket('avatars')
    t.match(data, { public: false, file_size_limit: null, allowed_mime_types: null })
    t.same(offsite, [], 'nothing loaded from elsewhere')
  })
}
