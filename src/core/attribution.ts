/**
 * Which tool finally served each run: its last successfully called tool, unless the same
 * conversation's next run re-asked (the same request, up to case and spacing) and a different tool
 * served that one — then that tool, and the run counts as corrected.
 */
import { conversations, type Run } from './serving.ts';

export interface Attribution {
  run_key: string;
  served_by: string | null;
  corrected: boolean;
}

export function attributeRuns(runs: readonly Run[]): Map<string, Attribution> {
  const out = new Map<string, Attribution>();
  for (const run of runs)
    out.set(run.key, { run_key: run.key, served_by: run.serving?.tool ?? null, corrected: false });
  for (const list of conversations(runs)) {
    for (let i = 0; i + 1 < list.length; i++) {
      const run = list[i]!;
      const next = list[i + 1]!;
      if (run.request === null || next.request === null || norm(run.request) !== norm(next.request)) continue;
      const later = next.serving?.tool ?? null;
      if (later !== null && later !== (run.serving?.tool ?? null))
        out.set(run.key, { run_key: run.key, served_by: later, corrected: true });
    }
  }
  return out;
}

function norm(text: string): string {
  return text.trim().toLowerCase().replace(/\s+/g, ' ');
}
