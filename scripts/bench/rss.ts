/**
 * Resident memory of the workerd processes a `wrangler dev` started, read from /proc (Linux only):
 * every process below wrangler's pid whose command is `workerd`, summed. A sampler keeps the peak
 * and notices a restart: a workerd pid that goes away, or one that appears after the first sample.
 */
import { readdirSync, readFileSync } from 'node:fs';

interface Proc {
  pid: number;
  ppid: number;
  comm: string;
}

/** Every process's pid, parent and command name (processes that end mid-walk are skipped). */
function processes(): Proc[] {
  const out: Proc[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid …": comm may hold spaces and parentheses, so split at the last ')'.
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const ppid = Number(stat.slice(close + 2).split(' ')[1]);
      out.push({ pid: Number(entry), ppid, comm });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The workerd processes in the tree below `root`, with their resident memory in bytes. */
export function workerdMemory(root: number): { pid: number; rss: number }[] {
  const all = processes();
  const children = new Map<number, Proc[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const found: { pid: number; rss: number }[] = [];
  const stack = [...(children.get(root) ?? [])];
  for (let p = stack.pop(); p !== undefined; p = stack.pop()) {
    stack.push(...(children.get(p.pid) ?? []));
    if (p.comm !== 'workerd') continue;
    try {
      const status = readFileSync(`/proc/${p.pid}/status`, 'utf8');
      const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
      found.push({ pid: p.pid, rss: kb * 1024 });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

export interface RssSampler {
  /** The highest sum of workerd RSS seen so far, in bytes. */
  peak(): number;
  /** The latest sum, in bytes. */
  current(): number;
  /** Peak since the last `mark()` (for per-phase figures), then starts a new phase. */
  mark(): number;
  /** workerd pids that went away or appeared after the first sample: each is a restart. */
  restarts(): string[];
  stop(): void;
}

/** Samples every `everyMs` until stopped; the sampling itself is a /proc walk, ~1 ms. */
export function sampleRss(root: number, everyMs = 200): RssSampler {
  let peak = 0;
  let phase = 0;
  let current = 0;
  let known: Set<number> | null = null;
  const restarts: string[] = [];
  const tick = (): void => {
    const now = workerdMemory(root);
    current = now.reduce((n, p) => n + p.rss, 0);
    peak = Math.max(peak, current);
    phase = Math.max(phase, current);
    const pids = new Set(now.map((p) => p.pid));
    if (known !== null) {
      for (const pid of known) if (!pids.has(pid)) restarts.push(`workerd ${pid} ended`);
      for (const pid of pids) if (!known.has(pid)) restarts.push(`workerd ${pid} started`);
    }
    if (known !== null || pids.size > 0) known = pids;
  };
  tick();
  const timer = setInterval(tick, everyMs);
  return {
    peak: () => peak,
    current: () => current,
    mark: () => {
      tick();
      const p = phase;
      phase = current;
      return p;
    },
    restarts: () => [...restarts],
    stop: () => clearInterval(timer),
  };
}
