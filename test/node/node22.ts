/**
 * A Node 22 binary for a tool that needs it (the MCP conformance runner), while the project itself
 * runs on Node 20: this Node when it is 22 or newer, else the official build that the npm registry
 * ships as `node-<platform>-<arch>`, installed once into node_modules/.cache (pinned version).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const NODE_22 = '22.23.5';
const root = fileURLToPath(new URL('../..', import.meta.url));

export async function node22(): Promise<string> {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  const pkg = `node-${process.platform}-${process.arch}`;
  const dir = join(root, 'node_modules/.cache/whetstone-node22');
  const bin = join(dir, 'node_modules', pkg, 'bin', 'node');
  if (existsSync(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  const out = await new Promise<{ code: number | null; log: string }>((resolve) => {
    const child = spawn(
      'npm',
      ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefix', dir, `${pkg}@${NODE_22}`],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let log = '';
    child.stdout.on('data', (d: Buffer) => (log += d.toString()));
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    child.on('exit', (code) => resolve({ code, log }));
  });
  if (out.code !== 0 || !existsSync(bin))
    throw new Error(`could not install ${pkg}@${NODE_22} from the npm registry:\n${out.log.slice(-2000)}`);
  return bin;
}
