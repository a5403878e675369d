// Called on an element before typing: focuses it and, with clear, selects
// its content (typing then replaces it), else puts the caret at the end.
function (clear) {
  const e = this;
  e.focus();
  if (clear) {
    if (typeof e.select === "function") e.select();
    else {
      const r = document.createRange();
      r.selectNodeContents(e);
      const s = getSelection();
      s.removeAllRanges();
      s.addRange(r);
    }
  } else if (typeof e.setSelectionRange === "function" && typeof e.value === "string") {
    try { e.setSelectionRange(e.value.length, e.value.length); } catch (err) {}
  }
  return document.activeElement === e || e.contains(document.activeElement);
}
