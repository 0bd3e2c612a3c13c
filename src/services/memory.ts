/**
 * Routing memory (docs/learning.md "Routing memory"): what a review remembers of the requests each
 * tool finally served, and how such a revision is applied. Each stored review reads the recent log,
 * takes the runs served since the previous review (hits and misses alike, by the attribution every
 * learning rule reads; tools that served one run together each remember it), masks their requests
 * by the privacy rule, and proposes one revision of kind `memory` per tool with wordings its memory
 * lacks. Applying merges them within `memory_bytes` (src/core/routing-memory.ts), re-checks
 * displacement one wording at a time like example requests, and writes the row like any revision,
 * so undo restores the memory it had. The model view never reads memory.
 */
import { LOG_PAGE_ROWS, type NewRevision } from '../core/ports.ts';
import { attributeRuns, servingTools } from '../core/attribution.ts';
import { learnedState } from '../core/learning.ts';
import { createLogMasker, definedTool } from '../core/log-masker.ts';
import { noChanges, type StoredTool } from '../core/records.ts';
import {
  conversationMark,
  indexClaims,
  memoryBudget,
  mergeMemory,
  type MemoryWording,
  routedWordings,
  sameWhole,
  sameWords,
  wordingBytes,
  wordingKey,
  withoutSaid,
} from '../core/routing-memory.ts';
import { argumentValues, scrubValues, withoutPlaceholders } from '../core/scrub.ts';
import { groupRuns, timeOf } from '../core/serving.ts';
import { contentWords } from '../core/text.ts';
import type { Services } from '../env.ts';
import { ApiError } from '../errors.ts';
import type { MemoryChange, Revision, Settings } from '../schemas.ts';

/** `approved_by` of a memory revision applied by `memory_auto_apply`. */
export const MEMORY_APPLY_BY = 'whetstone:routing_memory';

/**
 * Turns and calls (each) a review reads for memory, newest first, from the previous review on: one
 * page of the log (LOG_PAGE_ROWS, src/core/ports.ts), so a busy agent's pass of traffic between
 * two reviews is read whole; what is older than that is not remembered.
 */
const MEMORY_LOG_ROWS = LOG_PAGE_ROWS;

/** A wording of fewer words than this says too little to route by ("yes", "do it"). */
const MIN_WORDS = 2;

/**
 * The memory revisions of one review: for each registered tool, the masked wordings of the runs
 * it served whose serving call is newer than the previous review (`since`: its time and its call
 * mark), minus those its memory already routes, and minus those another tool claims: its example
 * requests say them (an example is a checked claim that its wording belongs to its tool; the same
 * review's proposed examples, `proposed`, count), its memory holds them (routed or waiting), or it
 * served them alone in a run of this window. Memory takes the log's credit as it comes, and an
 * agent's uncorrected wrong pick is credited to the wrong tool, in as many conversations as the pick
 * recurs: a wording the log credits to two tools is contested, and neither remembers it from this
 * review (tools that served one run together contest nothing between them, nor later, when one
 * of them serves its part of that request alone: `Claims.claimants`). Minus, too,
 * those the tool's own example requests on its row say (any source; not one only proposed in the
 * same review, which may yet be refused and leave its wording nowhere): routing reads them
 * already, and a second copy spends the byte budget on nothing new while it weighs that wording
 * twice in the tool's vector. A run the conversation went on from to other tools, in words that
 * neither ask again nor follow up (`Attribution.unsettled`), is neither remembered nor a claim: it
 * may be a wrong answer the user gave up on. And a run served together teaches a tool nothing when
 * another tool of that run served the same whole request on its own (`sameWhole`; its examples, its
 * memory not served together, or a run of this window): that request asked the other tool alone.
 * Empty when `memory_bytes` is 0.
 */
export async function proposeMemory(
  svc: Services,
  agent: string,
  settings: Settings,
  since: { at: string | null; seq: number },
  now: string,
  proposed: readonly { tool: string; queries_added: readonly string[] }[] = [],
): Promise<NewRevision[]> {
  if (settings.memory_bytes === 0) return [];
  const tools = await svc.store.listTools(agent, { vectors: false });
  if (tools.length === 0) return [];
  const budget = memoryBudget(settings.memory_bytes, tools.length);
  const log = await svc.log.windowLog(agent, since.at ?? '', MEMORY_LOG_ROWS);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const values = argumentValues(log.calls);
  const masker = svc.privacyRule ? createLogMasker(log, tools.map(definedTool), settings.min_conversations) : null;
  const attributed = attributeRuns(groupRuns(log.turns, log.calls), log.outcomes, {
    minConversations: settings.min_conversations,
  });
  const ordered = [...attributed.values()].sort((a, b) => timeOf(a.run.at) - timeOf(b.run.at));
  // Each run's request as each tool that served it may remember it (masked for that tool).
  const served = ordered.flatMap((a) => {
    const request = a.run.request;
    if (request === null || a.call === null || a.unsettled) return [];
    const scrubbed = scrubValues(request, values);
    return servingTools(a).map((name) => ({
      a,
      name,
      text: withoutPlaceholders(masker ? masker.mask(scrubbed, name, values) : scrubbed),
    }));
  });
  // Who else claims a wording: another tool's example requests (this review's proposed ones too),
  // another tool's memory (routed or waiting), or a run of this window that another tool served
  // alone. Tools that served one run together do not contest it with each other (`allies`), and a
  // request a tool's row holds as served together contests nothing for it (another tool's copy).
  const claims = indexClaims([
    ...tools.flatMap((t) => [
      ...t.examples.filter((e) => e.source !== 'synthetic').map((e) => ({ tool: t.name, text: e.text })),
      ...t.memory.map((w) => ({ tool: t.name, text: w.text, together: w.together === true })),
    ]),
    ...proposed.flatMap((r) => r.queries_added.map((text) => ({ tool: r.tool, text }))),
    ...served.filter((s) => s.a.together.length <= 1).map((s) => ({ tool: s.name, text: s.text })),
  ]);
  const claimedElsewhere = (tool: string, text: string, allies: readonly string[]): boolean =>
    [...claims.claimants(text, tool)].some((claimant) => claimant !== tool && !allies.includes(claimant));
  const proposals = new Map<string, { wordings: Map<string, string>; runs: MemoryChange['runs'] }>();
  // Each tool's routed wordings as keys, found once: every run the tool served is held against them.
  const routedKeys = new Map<string, ReadonlySet<string>>();
  const routedKeysOf = (tool: StoredTool): ReadonlySet<string> => {
    let keys = routedKeys.get(tool.name);
    if (!keys) {
      keys = new Set(routedWordings(tool.memory).map((w) => wordingKey(w.text)));
      routedKeys.set(tool.name, keys);
    }
    return keys;
  };
  // Each wording's content words, found once: a busy tool compares every run with them.
  const wordsOf = new Map<string, ReadonlySet<string>>();
  const words = (text: string): ReadonlySet<string> => {
    let w = wordsOf.get(text);
    if (!w) {
      w = contentWords(text);
      wordsOf.set(text, w);
    }
    return w;
  };
  // Each tool's own example requests on its row (every source) as content words, found once.
  const ownSaid = new Map<string, readonly ReadonlySet<string>[]>();
  const saidByOwnExamples = (tool: StoredTool, mine: ReadonlySet<string>): boolean => {
    let said = ownSaid.get(tool.name);
    if (!said) {
      said = tool.examples.map((e) => contentWords(e.text));
      ownSaid.set(tool.name, said);
    }
    return said.some((w) => sameWords(w, mine));
  };
  // What each tool served whole on its own, as content words (`words`), found when first asked: its
  // example requests, its memory's wordings not served together, and the runs of this window it served alone.
  const servedAlone = new Map<string, string[]>();
  for (const s of served) {
    if (s.a.together.length > 1) continue;
    const list = servedAlone.get(s.name);
    if (list) list.push(s.text);
    else servedAlone.set(s.name, [s.text]);
  }
  const aloneSets = new Map<string, readonly ReadonlySet<string>[]>();
  const aloneOf = (name: string): readonly ReadonlySet<string>[] => {
    let sets = aloneSets.get(name);
    if (!sets) {
      const t = byName.get(name);
      sets = [
        ...(t?.examples ?? []).filter((e) => e.source !== 'synthetic').map((e) => e.text),
        ...(t?.memory ?? []).filter((w) => w.together !== true).map((w) => w.text),
        ...(servedAlone.get(name) ?? []),
      ].map(words);
      aloneSets.set(name, sets);
    }
    return sets;
  };
  // A request one tool served whole on its own asked that tool alone: another tool that did
  // something beside it in one run did it on the way (a look-up the log did not show as one),
  // not because the request asked for it, and does not remember the wording from that run.
  const askedAloneOfAlly = (tool: string, text: string, allies: readonly string[]): boolean => {
    const mine = words(text);
    return allies.some((ally) => ally !== tool && aloneOf(ally).some((set) => sameWhole(set, mine)));
  };
  for (const { a, name, text } of served) {
    if (a.call === null || a.call.seq <= since.seq) continue;
    const tool = byName.get(name);
    if (!tool) continue;
    const together = a.together.length > 1;
    if (!isRememberable(text, routedKeysOf(tool), budget) || claimedElsewhere(name, text, a.together)) continue;
    if (together && askedAloneOfAlly(name, text, a.together)) continue;
    if (saidByOwnExamples(tool, words(text))) continue;
    const conversation = a.run.conversation_id ?? a.run.key;
    let p = proposals.get(name);
    if (!p) {
      p = { wordings: new Map(), runs: [] };
      proposals.set(name, p);
    }
    const key = wordingKey(text);
    const wording =
      p.wordings.get(key) ?? [...p.wordings.values()].find((w) => sameWords(words(w), words(text))) ?? text;
    if (wording === text) p.wordings.set(key, text);
    // A wording needs its conversations counted up to min_conversations, no further.
    const counted = p.runs.filter((r) => r.wording === wording);
    if (counted.some((r) => r.conversation === conversation) || counted.length >= settings.min_conversations) continue;
    p.runs.push({ turn_id: a.run.turn_id, call_id: a.call.call_id, at: a.run.at, together, wording, conversation });
  }
  return [...proposals].map(([name, p]) => memoryRevision(byName.get(name), name, p, now));
}

/**
 * A wording worth remembering: enough words, within the budget, not among the keys of what the tool's
 * memory routes (a pending one is proposed again: this run's conversation counts towards it).
 */
function isRememberable(text: string, routedKeys: ReadonlySet<string>, budget: number): boolean {
  if (text.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length < MIN_WORDS) return false;
  if (wordingBytes(text) > budget) return false;
  return !routedKeys.has(wordingKey(text));
}

function memoryRevision(
  tool: StoredTool | undefined,
  name: string,
  p: { wordings: Map<string, string>; runs: MemoryChange['runs'] },
  now: string,
): NewRevision {
  return {
    revision_id: `rev_${crypto.randomUUID()}`,
    tool: name,
    created_at: now,
    kind: 'memory',
    memory: { added: [...p.wordings.values()], withdrawn: [], dropped: [], runs: p.runs },
    ...noChanges(),
    base_version: tool?.version ?? 0,
  };
}

/** What applying a memory revision makes of the row's memory. */
export interface MemoryPlan {
  memory: MemoryWording[];
  change: MemoryChange;
}

/**
 * The tool's memory with `added` merged in under its byte budget in a toolbox of `tools`
 * (`memoryBudget`): `added` keeps the wordings that made it in, `dropped` the ones already held
 * that the budget let go or that the row's examples now say (`withoutSaid`).
 */
export function planMemory(
  row: StoredTool,
  change: MemoryChange,
  added: readonly string[],
  settings: Settings,
  at: number,
  tools: number,
): MemoryPlan {
  if (settings.memory_bytes === 0)
    throw new ApiError('conflict', 'routing memory is off for this agent (memory_bytes is 0); nothing was written');
  // What the row's examples say is not held again (they may have grown since the proposal).
  const said = row.examples.map((e) => e.text);
  const memory = mergeMemory(
    withoutSaid(row.memory, said),
    withoutSaid(
      added.map((text) => ({
        text,
        at,
        conversations: conversationsOf(change.runs, text),
        together: servedTogether(change.runs, text),
      })),
      said,
    ),
    memoryBudget(settings.memory_bytes, tools),
    settings.min_conversations,
  );
  const kept = new Set(memory.map((w) => w.text));
  return {
    memory,
    change: {
      ...change,
      added: added.filter((t) => kept.has(t)),
      dropped: row.memory.filter((w) => !kept.has(w.text)).map((w) => w.text),
    },
  };
}

/**
 * The distinct conversations (their marks) a revision's runs served `wording` in; undefined for a revision stored
 * before runs named their wording (its wordings route at once, as they did when it was proposed).
 */
function conversationsOf(runs: MemoryChange['runs'], wording: string): string[] | undefined {
  if (runs.length > 0 && runs.every((r) => r.wording === undefined)) return undefined;
  return [
    ...new Set(
      runs.filter((r) => r.wording === wording).map((r) => conversationMark(r.conversation ?? `turn:${r.turn_id}`)),
    ),
  ];
}

/** True when every run a revision's `wording` rests on was served together with other tools. */
function servedTogether(runs: MemoryChange['runs'], wording: string): boolean {
  const of = runs.filter((r) => r.wording === wording);
  return of.length > 0 && of.every((r) => r.together);
}

/** The row's learned state with `memory` in place of its own. */
export function withMemory(row: StoredTool, memory: MemoryWording[]): ReturnType<typeof learnedState> {
  return { ...learnedState(row), memory };
}

/** True for a revision of routing memory. */
export function isMemoryRevision(rev: Revision): rev is Revision & { kind: 'memory'; memory: MemoryChange } {
  return rev.kind === 'memory' && rev.memory !== undefined;
}
