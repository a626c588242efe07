// Builds the plugin (main.js, loaded by Obsidian from .obsidian/plugins/folio/)
// and, with `tests`, the test files into build-test/ for node --test.
import esbuild from 'esbuild';
import { readdirSync } from 'node:fs';

const mode = process.argv[2] ?? 'dev';

if (mode === 'tests') {
  const entryPoints = readdirSync('test').filter((f) => f.endsWith('.test.ts')).map((f) => 'test/' + f);
  await esbuild.build({
    entryPoints, bundle: true, platform: 'node', format: 'esm', target: 'node18',
    outdir: 'build-test', outExtension: { '.js': '.mjs' }, logLevel: 'warning',
    alias: { obsidian: './test/obsidian-stub.ts' },   // main.test.ts: the glue outside the app
  });
} else {
  const options = {
    entryPoints: ['src/main.ts'], bundle: true, format: 'cjs', platform: 'browser', target: 'es2020',
    external: ['obsidian', 'electron', '@codemirror/*', '@lezer/*'],
    outfile: 'main.js', logLevel: 'warning', sourcemap: mode === 'production' ? false : 'inline',
    minify: mode === 'production', treeShaking: true,
  };
  if (mode === 'production') await esbuild.build(options);
  else await (await esbuild.context(options)).watch();
}
