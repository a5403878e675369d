// xterm.js writes its dynamic CSS (cell sizes, theme colours, scrollbar)
// into <style> elements it creates. The console's Content-Security-Policy
// allows no inline style (style-src 'self'), so those elements would be
// blocked. Constructed stylesheets (CSSOM) are not inline markup and are
// allowed: this shim hands xterm an inert element whose textContent goes
// into an adopted CSSStyleSheet instead. The console itself never creates
// <style> elements; only text set by our own bundled code reaches it.

type Shimmed = HTMLElement & { __sheet?: CSSStyleSheet };

function shimStyle(doc: Document, make: (tag: string) => HTMLElement): HTMLElement {
  const el = make('paddock-style') as Shimmed;
  el.hidden = true;
  const sheet = new doc.defaultView!.CSSStyleSheet();
  el.__sheet = sheet;
  doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet];
  let text = '';
  Object.defineProperty(el, 'textContent', {
    get: () => text,
    set: (v: string | null) => {
      text = v ?? '';
      sheet.replaceSync(text);
    },
  });
  const remove = el.remove.bind(el);
  el.remove = () => {
    doc.adoptedStyleSheets = doc.adoptedStyleSheets.filter((s) => s !== sheet);
    remove();
  };
  return el;
}

let installed = false;

export function installStyleShim(): void {
  if (installed) return;
  installed = true;
  const orig = Document.prototype.createElement;
  Document.prototype.createElement = function (this: Document, tag: string, opts?: ElementCreationOptions) {
    if (typeof tag === 'string' && tag.toLowerCase() === 'style') {
      return shimStyle(this, (t) => orig.call(this, t, opts));
    }
    return orig.call(this, tag, opts);
  } as typeof Document.prototype.createElement;
}
