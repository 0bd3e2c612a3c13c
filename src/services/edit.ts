/**
 * The context an approver's edit is checked in (src/core/edits.ts): what a review of the tool
 * would check a line against now. The revision's evidence is what a reworded line may rest on; the
 * tool's recent log gives the argument values no line may carry, the privacy rule and where each
 * piece of evidence comes from; the agent's rows give the kept lines, duplicates and caps.
 */
import { findEvidenceWithOrigins } from '../core/evidence.ts';
import { checkEdit, type EditResult, type LineEdit } from '../core/edits.ts';
import { createLogMasker } from '../core/log-masker.ts';
import type { ProposalContext } from '../core/proposals.ts';
import type { StoredTool } from '../core/records.ts';
import { argumentValues } from '../core/scrub.ts';
import type { Services } from '../env.ts';
import type { Revision, Settings } from '../schemas.ts';
import { definitionOf, keptLinesOf } from './review.ts';
import { definedTool } from '../core/log-masker.ts';
import { readReviewLog } from './review-reads.ts';
import type { ApplyEdit } from './apply.ts';

/** Checks an edit of a proposed revision of `row` against every check a proposed line passes. */
export async function checkRevisionEdit(
  svc: Services,
  agent: string,
  rev: Revision,
  edit: LineEdit,
  row: StoredTool,
  tools: ReadonlyMap<string, StoredTool>,
  settings: Settings,
): Promise<EditResult> {
  const registered = new Set(tools.keys());
  const [log, kept] = await Promise.all([
    readReviewLog(svc, agent, [row.name], settings.max_calls_per_tool),
    keptLinesOf(svc, agent, tools.values()),
  ]);
  const values = argumentValues(log.calls);
  const masker = createLogMasker(log, [...tools.values()].map(definedTool), settings.min_conversations);
  const mask = svc.privacyRule ? (text: string) => masker.mask(text, row.name, values) : undefined;
  const origins = findEvidenceWithOrigins({
    turns: log.turns,
    calls: log.calls,
    outcomes: log.outcomes,
    registered,
    minConversations: settings.min_conversations,
    mask: svc.privacyRule ? (text, tool, v) => masker.mask(text, tool, v) : undefined,
  });
  const ctx: ProposalContext = {
    tool: row.name,
    evidence: rev.evidence,
    registered,
    values,
    existing: { notes: row.notes, avoid: row.avoid, examples: row.examples },
    settings,
    kept: kept.get(row.name),
    origins,
    mask,
    definition: definitionOf(row),
  };
  return checkEdit(rev, edit, ctx);
}

/** An approver's lines for a revision of `agent`, checked by `checkRevisionEdit` when apply or try reads them. */
export function approverEdit(svc: Services, agent: string, lines: LineEdit): Pick<ApplyEdit, 'lines' | 'check'> {
  return {
    lines,
    check: (rev, edit, row, tools, settings) => checkRevisionEdit(svc, agent, rev, edit, row, tools, settings),
  };
}
