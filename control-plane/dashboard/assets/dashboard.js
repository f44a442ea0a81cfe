// Every dashboard page: copy buttons (data-copy names the element whose text
// is copied) and confirmations before a form is sent (data-confirm).
document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null
  if (!button) return
  const source = document.getElementById(button.dataset.copy)
  if (!source) return
  const text = source.textContent ?? ''
  try {
    await navigator.clipboard.writeText(text)
  } catch {
    // Without clipboard access (plain http on another host): select the text for Ctrl-C.
    const range = document.createRange()
    range.selectNodeContents(source)
    const selection = window.getSelection()
    selection.removeAllRanges()
    selection.addRange(range)
  }
  const label = button.textContent
  button.textContent = 'Copied'
  setTimeout(() => (button.textContent = label), 1500)
})

document.addEventListener('submit', (event) => {
  const form = event.target
  if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) event.preventDefault()
})
