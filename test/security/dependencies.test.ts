/**
 * What the Worker bundles is declared as a production dependency: `npm audit --omit=dev` and any
 * licence or supply-chain scan of production dependencies see exactly what is deployed. Every bare
 * package a module of src/ imports as a value (type-only imports vanish from the bundle) must be in
 * package.json `dependencies`, with an exact version.
 */
import { describe, expect, it } from 'vitest';
import pkg from '../../package.json';

const sources = import.meta.glob<string>('../../src/**/*.ts', { query: '?raw', import: 'default', eager: true });

/** The package a specifier names: `@scope/name` or `name`; null for relative, `node:` and `cloudflare:` imports. */
/** Entry points that import an optional peer of their package, which the bundle then holds too. */
const PEERS: Record<string, string> = { '@modelcontextprotocol/sdk/validation/cfworker': '@cfworker/json-schema' };

function packageOf(specifier: string): string | null {
  if (specifier.startsWith('.') || /^[a-z]+:/.test(specifier)) return null;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? null);
}

describe('bundled packages are dependencies', () => {
  it('every package src/ imports as a value is in dependencies, pinned exactly', () => {
    const imported = new Set<string>();
    for (const [path, text] of Object.entries(sources)) {
      // The CLI runs in Node from dist/ and imports only node: modules; the dashboard's browser code is bundled apart.
      if (path.includes('/src/cli/') || path.includes('/src/dashboard/browser/')) continue;
      for (const m of text.matchAll(/^import\s+(?!type\s)[^;]*?from\s+'([^']+)'/gms)) {
        const name = m[1] ? packageOf(m[1]) : null;
        if (name) imported.add(name);
        const peer = m[1] ? PEERS[m[1]] : undefined;
        if (peer) imported.add(peer);
      }
    }
    expect([...imported].sort()).toEqual(
      expect.arrayContaining(['@cfworker/json-schema', '@modelcontextprotocol/sdk', 'hono', 'openai', 'zod']),
    );
    const deps: Record<string, string> = pkg.dependencies;
    const missing = [...imported].filter((name) => !(name in deps)).sort();
    expect(missing).toEqual([]);
    const devToo = [...imported].filter((name) => name in (pkg.devDependencies as Record<string, string>));
    expect(devToo).toEqual([]);
    for (const name of imported) expect(deps[name]).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
