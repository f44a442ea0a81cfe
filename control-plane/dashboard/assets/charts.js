// The charts of the Overview and the Usage tab: one uPlot chart a card, drawn
// at its card's inner width and redrawn at the new width whenever the card's
// width changes (a ResizeObserver: a window resized, a phone turned), so a
// chart never runs past its card and hides its latest points (issue 28 item 5).
// Loaded after uPlot's iife build and before the page's own script.
;(() => {
  const HEIGHT = 160
  /** The charts drawn, by card, to stop observing them when they are replaced. */
  const drawn = new Map()

  /** The card's content box: its width less its padding. */
  function innerWidth(card) {
    const style = getComputedStyle(card)
    return Math.max(100, Math.floor(card.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)))
  }

  const observer = new ResizeObserver((entries) => {
    for (const entry of entries) {
      const plot = drawn.get(entry.target)
      if (plot === undefined) continue
      const width = innerWidth(entry.target)
      if (width !== plot.width) plot.setSize({ width, height: HEIGHT })
    }
  })

  /** Removes `box`'s charts (before drawing it again). */
  function clear(box) {
    for (const [card, plot] of drawn) {
      if (!box.contains(card)) continue
      observer.unobserve(card)
      plot.destroy()
      drawn.delete(card)
    }
    box.replaceChildren()
  }

  // Times as UTC, as the catalogue's hours and days are.
  const utc = (seconds) => window.uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC')

  /**
   * Draws a card into `box`: `spec` is {id, title, series: [{label, stroke, dash?, values}]},
   * `times` the x values in seconds; `options.utc` writes the times in UTC.
   */
  function chart(box, spec, times, options = {}) {
    const card = document.createElement('figure')
    card.className = 'card chart'
    card.id = spec.id
    card.style.margin = '0'
    const caption = document.createElement('figcaption')
    caption.textContent = spec.title
    card.append(caption)
    box.append(card)
    const plot = new window.uPlot(
      {
        width: innerWidth(card),
        height: HEIGHT,
        ...(options.utc ? { tzDate: utc } : {}),
        series: [{}, ...spec.series.map(({ label, stroke, dash }) => ({ label, stroke, dash, width: 1.5, spanGaps: false }))],
        axes: [{}, { size: 50 }],
      },
      [times, ...spec.series.map((series) => series.values)],
      card,
    )
    drawn.set(card, plot)
    observer.observe(card)
    return plot
  }

  window.baseplaneCharts = { chart, clear }
})()
