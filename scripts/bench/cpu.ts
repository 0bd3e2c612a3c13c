/**
 * CPU time spent per request: the Worker's processes (wrangler's process group: workerd and its
 * proxy) plus the load generator's own process, read from /proc before and after a run. On a
 * shared machine, requests per second move with whatever else runs; CPU seconds per request
 * barely do, so the bench reports both.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** utime + stime of every process in the group, in seconds (0 where /proc cannot be read). */
function groupSeconds(pgid: number): number {
  let ticks = 0;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command (which may hold spaces) start at ") ": state is field 3.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid) continue;
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // the process ended meanwhile
    }
  }
  return ticks / TICKS_PER_SECOND;
}

/** A CPU meter over the Worker's processes and this one. */
export function cpuMeter(pgid: number): () => { worker: number; loadGenerator: number } {
  const worker = groupSeconds(pgid);
  const own = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(own);
    return { worker: groupSeconds(pgid) - worker, loadGenerator: (used.user + used.system) / 1e6 };
  };
}
