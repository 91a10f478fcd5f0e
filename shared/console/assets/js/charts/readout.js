// A chart's numbers on hover and focus: the bucket under the pointer or with the focus is told in
// the readout line under the chart (a polite live region, so a screen reader says it too). The
// columns are one tab stop: the arrow keys, Home and End move between buckets (a roving tabindex).

/** Wire `columns` (one per bucket) to `readout`; `texts[i]` is bucket i's line. */
export function wireReadout(layer, columns, readout, texts, idle) {
  let focused = null;
  const show = (i) => {
    readout.textContent = i === null ? idle : texts[i];
    readout.classList.toggle("chart-readout-idle", i === null);
  };
  const settle = (i) => {
    columns.forEach((c, k) => c.setAttribute("tabindex", k === i ? "0" : "-1"));
  };
  columns.forEach((col, i) => {
    col.addEventListener("focus", () => {
      focused = i;
      settle(i);
      show(i);
    });
    col.addEventListener("blur", () => {
      focused = null;
      show(null);
    });
    col.addEventListener("mouseenter", () => show(i));
    col.addEventListener("keydown", (event) => {
      const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: columns.length - 1 }[event.key];
      if (to === undefined) return;
      event.preventDefault();
      columns[Math.max(0, Math.min(columns.length - 1, to))].focus();
    });
  });
  layer.addEventListener("mouseleave", () => show(focused));
  // The latest bucket takes the tab stop until a key moves it.
  if (columns.length) settle(columns.length - 1);
  show(null);
}
