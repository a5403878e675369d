// The page's visible text (innerText), at most a.max characters.
(function (a) {
  const root = document.body || document.documentElement;
  const t = root ? root.innerText || "" : "";
  return { text: t.slice(0, a.max), length: t.length };
})
