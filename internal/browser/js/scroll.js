// Scrolls the page by {dx, dy} (0, 0: nothing) and reports where it is.
(function (a) {
  const el = document.scrollingElement || document.documentElement;
  const x0 = window.scrollX, y0 = window.scrollY;
  if (a.dx || a.dy) window.scrollBy({ left: a.dx, top: a.dy, behavior: "instant" });
  const maxX = Math.max(0, el.scrollWidth - window.innerWidth), maxY = Math.max(0, el.scrollHeight - window.innerHeight);
  const x = window.scrollX, y = window.scrollY;
  let atEnd = false;
  if (a.dy > 0) atEnd = y >= maxY - 1;
  if (a.dy < 0) atEnd = y <= 0;
  if (a.dx > 0) atEnd = x >= maxX - 1;
  if (a.dx < 0) atEnd = x <= 0;
  return { x, y, maxX, maxY, atEnd, dx: x - x0, dy: y - y0, vw: window.innerWidth, vh: window.innerHeight };
})
