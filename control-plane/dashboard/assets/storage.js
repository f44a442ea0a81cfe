// The Storage tab's upload: asks the dashboard for a signed upload URL of the
// project's endpoint for the one name chosen (the folder shown, then the
// file's own name or the one typed), then PUTs the file there as storage-js's
// uploadToSignedUrl() does, so the bucket's size limit and types apply; on
// success the folder is drawn again with a notice.
const form = document.getElementById('st-upload')

if (form) {
  const $ = (id) => document.getElementById(id)
  const problem = $('st-upload-problem')
  const status = $('st-upload-status')
  const button = $('st-upload-button')
  const say = (text) => {
    problem.hidden = !text
    problem.textContent = text ?? ''
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    say('')
    const file = $('st-file').files[0]
    if (!file) return say('Choose a file to upload')
    const typed = $('st-name').value.trim().replace(/^\/+/, '')
    const key = `${form.dataset.prefix}${typed || file.name}`
    button.disabled = true
    status.textContent = 'Uploading…'
    try {
      const asked = await fetch(`/dashboard/projects/${form.dataset.ref}/storage/upload-url`, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ bucket: form.dataset.bucket, key, upsert: $('st-upsert').checked }),
      })
      const signed = await asked.json().catch(() => ({ message: `The dashboard answered ${asked.status}` }))
      if (!asked.ok) throw new Error(signed.message)
      const sent = await fetch(signed.url, {
        method: 'PUT',
        headers: { 'content-type': file.type || 'application/octet-stream', 'cache-control': 'max-age=3600' },
        body: file,
      })
      if (!sent.ok) {
        const answer = await sent.json().catch(() => ({}))
        throw new Error(answer.message ? `Storage refused the upload: ${answer.message}` : `Storage answered ${sent.status}`)
      }
      const next = new URL(window.location.href)
      next.searchParams.delete('offset')
      next.searchParams.set('done', 'storage_uploaded')
      next.searchParams.delete('v')
      window.location.assign(next.toString())
    } catch (error) {
      status.textContent = ''
      say(error.message)
    } finally {
      button.disabled = false
    }
  })
}
