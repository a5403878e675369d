import { useEffect, useState } from 'preact/hooks';

// Hash routes: #/sandboxes, #/sandboxes/ID, #/audit, #/admin.
export function currentRoute(): string[] {
  const h = location.hash.replace(/^#\/?/, '');
  return h.split('/').filter(Boolean).map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
}

export function useRoute(): string[] {
  const [r, setR] = useState(currentRoute());
  useEffect(() => {
    const on = () => setR(currentRoute());
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return r;
}

export function href(...parts: string[]): string {
  return '#/' + parts.map(encodeURIComponent).join('/');
}

export function go(...parts: string[]): void {
  location.hash = href(...parts);
}
