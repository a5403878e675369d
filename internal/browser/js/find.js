// Finds the element an action targets. Called with {kind, value}:
// kind "css" (the first visible match of a CSS selector) or "text" (the
// visible element whose text, value, label or title is the text, a
// clickable one first; else the element around the text). Returns the
// element, null (nothing matches), "hidden:N" (N matches, none visible)
// or "invalid:MESSAGE" (a bad selector). Open shadow roots are searched.
(function (a) {
  const norm = (s) => String(s || "").replace(/\s+/g, " ").trim().toLowerCase();
  const visible = (e) => {
    if (!e.isConnected) return false;
    const r = e.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) return false;
    const st = getComputedStyle(e);
    return st.visibility !== "hidden" && st.display !== "none";
  };
  const roots = [document];
  const walk = document.createTreeWalker(document, NodeFilter.SHOW_ELEMENT);
  for (let n = walk.nextNode(), seen = 0; n && seen < 200000; n = walk.nextNode(), seen++) {
    if (n.shadowRoot && roots.length < 1000) roots.push(n.shadowRoot);
  }
  let hidden = 0;
  if (a.kind === "css") {
    try {
      for (const root of roots) {
        for (const e of root.querySelectorAll(a.value)) {
          if (visible(e)) return e;
          hidden++;
        }
      }
    } catch (err) {
      return "invalid:" + String(err && err.message || err).slice(0, 200);
    }
    return hidden ? "hidden:" + hidden : null;
  }
  const want = norm(a.value);
  if (!want) return null;
  const clickable = "a,button,input,select,textarea,summary,label,option,[role=button],[role=link],[role=tab]," +
    "[role=menuitem],[role=checkbox],[role=radio],[role=option],[role=switch],[onclick],[tabindex]";
  let best = null, bestScore = 99;
  const consider = (e, texts, boost) => {
    let score = 99;
    for (const t of texts) {
      const n = norm(t);
      if (!n) continue;
      if (n === want) score = Math.min(score, 0);
      else if (n.includes(want)) score = Math.min(score, 2 + Math.min(n.length / 1000, 1));
    }
    if (score === 99) return;
    if (!visible(e)) { hidden++; return; }
    score += boost;
    if (score < bestScore) { best = e; bestScore = score; }
  };
  for (const root of roots) {
    for (const e of root.querySelectorAll(clickable)) {
      consider(e, [e.innerText, e.value, e.getAttribute("aria-label"), e.title, e.placeholder, e.alt], 0);
    }
  }
  if (best && bestScore === 0) return best;
  for (const root of roots) {
    const tw = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let t = tw.nextNode(), seen = 0; t && seen < 200000; t = tw.nextNode(), seen++) {
      if (!norm(t.data).includes(want) && !(t.parentElement && norm(t.parentElement.innerText) === want)) continue;
      const e = t.parentElement;
      if (!e) continue;
      const target = e.closest(clickable) || e;
      consider(target, [e.innerText, t.data], 1);
    }
  }
  for (const e of document.querySelectorAll("img[alt],[aria-label],[title]")) {
    consider(e, [e.alt, e.getAttribute("aria-label"), e.title], 1.5);
  }
  return best || (hidden ? "hidden:" + hidden : null);
})
