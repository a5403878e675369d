// Called on an element: scrolls it into the middle of the viewport and
// says where to click it and whether it can be clicked (visible, enabled,
// not covered by another element).
function () {
  const e = this;
  if (!e.isConnected) return { gone: true };
  e.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
  const r = e.getBoundingClientRect();
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  const st = getComputedStyle(e);
  const out = {
    x, y, w: r.width, h: r.height,
    visible: r.width > 0 && r.height > 0 && st.visibility !== "hidden" && st.display !== "none",
    disabled: !!e.disabled || e.getAttribute("aria-disabled") === "true",
    tag: e.tagName.toLowerCase(),
    editable: false,
  };
  const t = (e.getAttribute("type") || "").toLowerCase();
  out.editable = e.isContentEditable || e.tagName === "TEXTAREA" ||
    (e.tagName === "INPUT" && !["button", "submit", "reset", "checkbox", "radio", "file", "image", "range", "color", "hidden"].includes(t));
  const root = e.getRootNode && e.getRootNode().elementFromPoint ? e.getRootNode() : document;
  const hit = root.elementFromPoint(x, y);
  const related = (h) => h === e || e.contains(h) || (h.control && h.control === e) || (e.control && e.control === h) ||
    (h.tagName === "LABEL" && e.labels && Array.from(e.labels).includes(h));
  if (hit && !related(hit)) {
    let d = hit.tagName.toLowerCase();
    if (hit.id) d += "#" + hit.id;
    else if (typeof hit.className === "string" && hit.className.trim()) d += "." + hit.className.trim().split(/\s+/).slice(0, 3).join(".");
    out.covered = d.slice(0, 120);
  }
  if (!hit) out.offscreen = true;
  return out;
}
