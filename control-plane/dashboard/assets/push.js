// The Push tab: a chosen key file (.p8, service-account .json) fills the text
// box its form sends, since the dashboard's forms are URL-encoded; pasting the
// file's contents into the box works without this script.
const MAX_BYTES = 65536

document.addEventListener('change', async (event) => {
  const input = event.target
  if (!(input instanceof HTMLInputElement) || input.type !== 'file' || !input.dataset.fill) return
  const target = document.getElementById(input.dataset.fill)
  const file = input.files && input.files[0]
  if (!target || !file) return
  if (file.size > MAX_BYTES) {
    target.value = ''
    input.setCustomValidity(`${file.name} is larger than a key file (${MAX_BYTES} bytes at most)`)
    input.reportValidity()
    return
  }
  input.setCustomValidity('')
  target.value = await file.text()
})
