// Builds the console into internal/console/assets (or the directory given
// as the first argument): app.js, app.css and index.html. The output is
// committed and must be reproducible: the same sources and lock file give
// the same bytes (TestAssetsReproducible checks it).
import { build } from 'esbuild';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] || join(here, '..', '..', 'internal', 'console', 'assets'));
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const common = {
  bundle: true,
  minify: true,
  legalComments: 'linked',
  target: ['chrome110', 'firefox115', 'safari16'],
  logLevel: 'warning',
  absWorkingDir: here,
  charset: 'utf8',
};
await build({
  ...common,
  entryPoints: { app: 'src/main.tsx' },
  outdir: out,
  format: 'esm',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  define: { 'process.env.NODE_ENV': '"production"' },
});
await build({ ...common, entryPoints: { app: 'src/style.css' }, outdir: out });
writeFileSync(join(out, 'index.html'), readFileSync(join(here, 'src', 'index.html')));
console.log('console built into', out);
