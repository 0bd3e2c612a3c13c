/**
 * The code that decides what a model's proposal may write (docs/learning.md "Checks"). A reply is data: it
 * is parsed with zod, and every proposed line passes every check or is refused with its reason.
 * The same checks apply to the extractive model and to a real one.
 */
import { z } from 'zod';
import { LIMITS, type Evidence, type Example, type Refusal, type RefusalReason, type Settings } from '../schemas.ts';
import type { HeldLine } from '../schemas.ts';
import { saysTheSame } from './displacement.ts';
import { jsonObjectsIn } from './json-in-text.ts';
import { isCapped } from './long-request.ts';
import { checkLineText, normalizeLine } from './safety.ts';
import { findArgumentValue, scrubValues, withoutPlaceholders } from './scrub.ts';
import type { ServedRequests } from './served-requests.ts';
import { contentWords, isStopword, normalize, splitIdentifier, stem } from './text.ts';

const Proposed = z.object({ text: z.string(), cites: z.array(z.string()).default([]) });

/** A model's review reply: lenient on missing arrays, strict on types. */
export const ProposalReply = z.object({
  notes: z.array(Proposed).default([]),
  requests: z.array(Proposed).default([]),
  avoid: z.array(Proposed).default([]),
});
export type ProposalReply = z.infer<typeof ProposalReply>;

/** docs/learning.md: a note or "Not for" line is one line of at most 220 characters. */
export const MAX_LINE_CHARS = 220;
/** A refused text is kept for a person to read, cut to this length. */
const REFUSED_TEXT_CHARS = 500;
/** A reply longer than this is not scanned for a JSON object (a model reply is a few KB). */
const MAX_REPLY_CHARS = 200_000;

type ProposalKind = 'note' | 'request' | 'avoid';

/** What each kind must rest on and how long it may be (docs/learning.md table). */
const RULES = {
  note: { evidence: 'failed_call', min: 'min_failures', maxChars: MAX_LINE_CHARS },
  request: { evidence: 'missed_request', min: 'min_misses', maxChars: LIMITS.exampleChars },
  avoid: { evidence: 'confused_request', min: 'min_confusions', maxChars: MAX_LINE_CHARS },
} as const satisfies Record<ProposalKind, { evidence: Evidence['kind']; min: keyof Settings; maxChars: number }>;

export type ProposalSettings = Pick<
  Settings,
  'min_failures' | 'min_misses' | 'min_confusions' | 'max_notes' | 'max_avoid' | 'max_new_queries' | 'max_queries'
> &
  Partial<Pick<Settings, 'min_conversations'>>;

/** Everything a check needs to know about the tool under review. */
export interface ProposalContext {
  tool: string;
  /** The evidence the model was shown; only this tool's evidence can be cited. */
  evidence: readonly Evidence[];
  registered: ReadonlySet<string>;
  /** Argument values of the calls read (scrub.ts `argumentValues`). */
  values: readonly unknown[];
  existing: { notes: readonly string[]; avoid: readonly string[]; examples: readonly Example[] };
  settings: ProposalSettings;
  /** What the rows keep that a proposal must not contradict (docs/learning.md "Cross-checks"). */
  kept?: KeptLines | undefined;
  /**
   * Where each piece of evidence comes from (evidence.ts `findEvidenceWithOrigins`): thresholds
   * count runs, from at least `min_conversations` conversations. Absent: each piece is its own.
   */
  origins?: EvidenceOrigins | undefined;
  /** Masks personal values in a proposed line (privacy.ts); absent: only argument values are refused. */
  mask?: ((text: string) => string) | undefined;
  /** The tool's own words (name and description): a line in another language or script is suspicious. */
  definition?: string | undefined;
}

/** The run and conversation of each piece of evidence, by evidence id. */
export interface EvidenceOrigins {
  runs: ReadonlyMap<string, string>;
  conversations: ReadonlyMap<string, string>;
  /** Evidence whose request or error, as sent, is aimed at the model: no line may rest on it. */
  hostile?: ReadonlyMap<string, string>;
  /**
   * Per tool, the conversations each content word of the requests it finally served came from
   * (evidence.ts `findEvidenceWithOrigins`). Absent: an example's words are not checked.
   */
  served?: ReadonlyMap<string, ReadonlyMap<string, ReadonlySet<string>>>;
  /** Every request a tool finally served, by word (served-requests.ts). Absent: no example is held against them. */
  servedRequests?: ServedRequests;
}

/** The requests kept "Not for" lines rest on, as `requestKey`s. */
export interface KeptLines {
  /** The requests this tool's kept "Not for" lines rest on. */
  avoided: ReadonlySet<string>;
  /** Per other tool, the requests its kept "Not for" lines naming this tool rest on. */
  naming: ReadonlyMap<string, ReadonlySet<string>>;
}

/**
 * The identity of a request across evidence and examples: its words with value placeholders out,
 * up to case and spacing. The same wording in two runs is one request here.
 */
export function requestKey(text: string): string {
  return normalize(withoutPlaceholders(text));
}

/** What passed, and what was refused with its reason. */
export interface ProposalCheck {
  notes_added: string[];
  queries_added: string[];
  avoid_added: string[];
  refused: Refusal[];
  /** Evidence ids cited by what passed: the evidence the revision rests on. */
  cited: string[];
  /** Lines that passed but are suspicious (src/core/safety.ts): `auto_apply` leaves them for a person. */
  held?: HeldLine[];
}

export type ParsedReply = { ok: true; reply: ProposalReply } | { ok: false; refusal: Refusal };

/** Parses a raw model reply (a JSON object, possibly wrapped in chatter or a code fence). */
export function parseProposalReply(tool: string, raw: string | null): ParsedReply {
  const refuse = (detail: string): ParsedReply => ({
    ok: false,
    refusal: { tool, kind: 'reply', text: cut(raw ?? ''), reason: 'invalid_reply', detail },
  });
  if (raw === null) return refuse('the model returned no reply');
  const json = extractJsonObject(raw);
  if (json === undefined) return refuse('no JSON object in the reply');
  const parsed = ProposalReply.safeParse(json);
  if (!parsed.success) {
    return refuse(parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; '));
  }
  return { ok: true, reply: parsed.data };
}

/** The first JSON object in a text that parses, or undefined. */
export function extractJsonObject(raw: string): unknown {
  if (raw.length > MAX_REPLY_CHARS) return undefined;
  return jsonObjectsIn(raw)[0];
}

/** Parses then checks a raw reply; an unparsable reply is one `invalid_reply` refusal. */
export function checkReply(raw: string | null, ctx: ProposalContext): ProposalCheck {
  const parsed = parseProposalReply(ctx.tool, raw);
  if (!parsed.ok) return { notes_added: [], queries_added: [], avoid_added: [], refused: [parsed.refusal], cited: [] };
  return checkProposal(parsed.reply, ctx);
}

/** Applies every check of docs/learning.md to a parsed reply (see `refusalOf` for the order). */
export function checkProposal(reply: ProposalReply, ctx: ProposalContext): ProposalCheck {
  const out: ProposalCheck = { notes_added: [], queries_added: [], avoid_added: [], refused: [], cited: [] };
  const groups: [ProposalKind, ProposalReply['notes'], string[]][] = [
    ['note', reply.notes, out.notes_added],
    ['request', reply.requests, out.queries_added],
    ['avoid', reply.avoid, out.avoid_added],
  ];
  const cited = new Set<string>();
  const examples = new Set<string>();
  for (const [kind, items, accepted] of groups) {
    for (const item of items) {
      // Checked and stored normalised (src/core/safety.ts): no hidden characters, no width tricks.
      const raw = normalizeLine(item.text).trim();
      const masked = maskedLine(kind, raw, ctx);
      const text = typeof masked === 'string' ? masked : raw;
      const refusal = typeof masked === 'string' ? refusalOf(kind, text, item.cites, accepted, ctx, examples) : masked;
      if (refusal) {
        const shown =
          refusal.reason === 'argument_value' || refusal.reason === 'personal_value' ? shownText(text, ctx) : text;
        out.refused.push({ tool: ctx.tool, kind, text: cut(shown), reason: refusal.reason, detail: refusal.detail });
      } else {
        accepted.push(text);
        const reasons = checkLineText(text, { definition: ctx.definition }).suspicious;
        if (reasons.length > 0) out.held = [...(out.held ?? []), { kind, text, reasons }];
        for (const id of item.cites) cited.add(id);
        if (kind === 'request') for (const key of citedRequests(item.cites, text, ctx)) examples.add(key);
      }
    }
  }
  out.cited = [...cited];
  return out;
}

interface Failure {
  reason: RefusalReason;
  detail: string;
}

/** A refused line as an approver may read it: argument values and personal values masked. */
function shownText(text: string, ctx: ProposalContext): string {
  const scrubbed = scrubValues(text, ctx.values);
  return ctx.mask ? ctx.mask(scrubbed) : scrubbed;
}

/**
 * The line with its personal values masked (docs/security.md "Personal values"): in a note or a
 * "Not for" line a value becomes `<value>`; an example is a user's wording, so its values are
 * dropped. A line left with no word of its own is refused. An argument value is refused outright
 * (below, `argument_value`): the model was never shown one.
 */
function maskedLine(kind: ProposalKind, text: string, ctx: ProposalContext): string | Failure {
  if (!ctx.mask) return text;
  // A line that fails its own form is refused for that, as the model wrote it.
  const form = formFailure(kind, text, ctx);
  if (form) return form;
  if (text === '') return text;
  const masked = ctx.mask(text);
  if (masked === text) return text;
  const line = kind === 'request' ? withoutPlaceholders(masked) : masked;
  if (contentWords(withoutPlaceholders(line)).size === 0)
    return { reason: 'personal_value', detail: 'nothing is left of the line once its personal values are masked' };
  return line;
}

/**
 * The first check a proposed line fails, or null. Order: its own form (shape, one line, length,
 * aimed at the model, argument values), then what it rests on (evidence, threshold, served-by,
 * shared words), then what is already there (duplicates), and the caps last, so a line that would
 * be refused anyway never takes a capped place.
 */
function refusalOf(
  kind: ProposalKind,
  text: string,
  cites: readonly string[],
  accepted: readonly string[],
  ctx: ProposalContext,
  examples: ReadonlySet<string>,
): Failure | null {
  const form = formFailure(kind, text, ctx);
  if (form) return form;
  const line = kind === 'avoid' ? notForLine(text, ctx) : { words: text, target: null };
  if ('reason' in line) return line;
  const basis = citedEvidence(kind, cites, ctx);
  if ('reason' in basis) return basis;
  // A request's or error's words carried into the line (an example, a "Not for" line, a quote in a
  // note) may be what is left of text aimed at the model once its values were masked.
  const carries = kind !== 'note' || text.includes('"');
  const hostile = carries ? basis.find((e) => ctx.origins?.hostile?.has(e.evidence_id)) : undefined;
  if (hostile) {
    return {
      reason: 'aimed_at_model',
      detail: `rests on "${hostile.evidence_id}", whose text as sent is aimed at the model (${ctx.origins?.hostile?.get(hostile.evidence_id)})`,
    };
  }
  return (
    basisFailure(basis, line, ctx) ??
    (kind === 'note' ? quoteFailure(text, basis, ctx) : null) ??
    (kind === 'request' ? (wordsFailure(text, ctx) ?? majorityFailure(text, ctx)) : null) ??
    contradiction(kind, text, basis, line, ctx, examples) ??
    duplicateFailure(kind, text, accepted, ctx) ??
    capFailure(kind, accepted, ctx)
  );
}

/** The requests an example rests on: the ones it cites, and its own wording. */
function citedRequests(cites: readonly string[], text: string, ctx: ProposalContext): string[] {
  const byId = new Map(ctx.evidence.map((e) => [e.evidence_id, e]));
  return [requestKey(text), ...cites.flatMap((id) => (byId.has(id) ? [requestKey(byId.get(id)?.text ?? '')] : []))];
}

/**
 * docs/learning.md "Cross-checks": a revision never adds an example and a "Not for" line resting on
 * the same request; an example never rests on a request this tool's kept "Not for" lines send
 * elsewhere; a "Not for" line never sends away a request the tool keeps as an example, nor mirrors a
 * kept line of the tool it names (A: "use B" and B: "use A" on the same requests).
 */
function contradiction(
  kind: ProposalKind,
  text: string,
  basis: readonly Evidence[],
  line: NotForLine,
  ctx: ProposalContext,
  examples: ReadonlySet<string>,
): Failure | null {
  const requests = basis.map((e) => requestKey(e.text));
  if (kind === 'request') {
    const avoided = [requestKey(text), ...requests].find((r) => ctx.kept?.avoided.has(r));
    return avoided === undefined
      ? null
      : { reason: 'contradicts', detail: `a kept "Not for" line of ${ctx.tool} sends "${avoided}" to another tool` };
  }
  if (kind !== 'avoid' || line.target === null) return null;
  const both = requests.find((r) => examples.has(r));
  if (both !== undefined) return { reason: 'contradicts', detail: `an example proposed above rests on "${both}"` };
  const keptExample = ctx.existing.examples.find((ex) => requests.includes(requestKey(ex.text)));
  if (keptExample) return { reason: 'contradicts', detail: `${ctx.tool} keeps "${keptExample.text}" as an example` };
  const mirrored = ctx.kept?.naming.get(line.target);
  const mirror = mirrored ? requests.find((r) => mirrored.has(r)) : undefined;
  if (mirror !== undefined) {
    return {
      reason: 'contradicts',
      detail: `${line.target} keeps a "Not for" line sending "${mirror}" to ${ctx.tool}`,
    };
  }
  return null;
}

function formFailure(kind: ProposalKind, text: string, ctx: ProposalContext): Failure | null {
  if (text === '') return { reason: 'bad_shape', detail: 'empty text' };
  if (/[\r\n\u2028\u2029]/.test(text)) return { reason: 'not_one_line', detail: 'the text spans more than one line' };
  if (kind === 'request' && isCapped(text))
    return { reason: 'too_long', detail: 'a request the log stored cut is never an example' };
  const max = RULES[kind].maxChars;
  if (text.length > max) return { reason: 'too_long', detail: `${text.length} characters; at most ${max}` };
  const aimed = checkLineText(text).refused;
  if (aimed) return { reason: 'aimed_at_model', detail: aimed };
  if (findArgumentValue(text, ctx.values) !== null)
    return { reason: 'argument_value', detail: 'contains a value passed in the arguments of a logged call' };
  return null;
}

interface NotForLine {
  /** The `<kind of request>` part: the words that must be shared with each cited request. */
  words: string;
  /** The tool named after `use`, or null for notes and requests. */
  target: string | null;
}

/**
 * The tool a `Not for …; use <tool>` line names ('' when it names none). A period ending the line
 * may belong to a tool name that ends in one ("use a.b."): the registered name decides.
 */
export function namedTool(line: string, registered: ReadonlySet<string>): string {
  const named = /; use (\S+?)\.?$/.exec(line)?.[1] ?? '';
  return !registered.has(named) && registered.has(`${named}.`) ? `${named}.` : named;
}

/** docs/learning.md: `Not for <kind of request>; use <tool>`, naming a registered tool other than its own. */
function notForLine(text: string, ctx: ProposalContext): NotForLine | Failure {
  if (!text.startsWith('Not for ')) return { reason: 'bad_shape', detail: 'a "Not for" line starts with "Not for"' };
  const words = /^Not for (.+); use \S+$/.exec(text)?.[1]?.trim();
  const target = namedTool(text, ctx.registered);
  if (!words || target === '') {
    return { reason: 'bad_shape', detail: 'the shape is "Not for <kind of request>; use <tool>"' };
  }
  if (target === ctx.tool) return { reason: 'own_tool', detail: `names its own tool "${target}"` };
  if (!ctx.registered.has(target)) return { reason: 'unknown_tool', detail: `"${target}" is not a registered tool` };
  return { words, target };
}

/** The cited evidence: real, of this tool, of the right kind, and at least the threshold count. */
function citedEvidence(kind: ProposalKind, cites: readonly string[], ctx: ProposalContext): Evidence[] | Failure {
  const rule = RULES[kind];
  const ids = [...new Set(cites)];
  if (ids.length === 0) return { reason: 'no_evidence', detail: `cites no ${rule.evidence}` };
  const own = new Map(ctx.evidence.filter((e) => e.tool === ctx.tool).map((e) => [e.evidence_id, e]));
  const found: Evidence[] = [];
  for (const id of ids) {
    const e = own.get(id);
    if (!e) return { reason: 'no_evidence', detail: `"${id}" is not evidence for ${ctx.tool}` };
    if (e.kind !== rule.evidence)
      return { reason: 'wrong_evidence', detail: `"${id}" is a ${e.kind}, not a ${rule.evidence}` };
    // A note tells the caller how to call the tool: only a failure the caller could have avoided teaches one.
    if (kind === 'note' && e.why_no_note !== undefined)
      return {
        reason: 'wrong_evidence',
        detail: `"${id}" was not the caller's fault, so it teaches no note: ${e.why_no_note}`,
      };
    found.push(e);
  }
  const min = ctx.settings[rule.min];
  const runs = new Set(found.map((e) => factKey(e, ctx.origins)));
  if (runs.size < min) return { reason: 'below_threshold', detail: `cites ${runs.size} runs; needs at least ${min}` };
  const conversations = conversationCount(found, ctx.origins);
  const minConversations = ctx.settings.min_conversations ?? 1;
  if (conversations < minConversations) {
    return {
      reason: 'below_threshold',
      detail: `cites ${conversations} conversations; needs at least ${minConversations} (min_conversations)`,
    };
  }
  if (kind === 'note') {
    const repeated = largestErrorGroup(found, ctx.origins);
    if (repeated.runs < min || repeated.conversations < minConversations) {
      return {
        reason: 'below_threshold',
        detail: `cites ${runs.size} runs, but at most ${repeated.runs} of them (in ${repeated.conversations} conversations) share one error; needs at least ${min} runs in ${minConversations} conversations`,
      };
    }
  }
  return found;
}

/**
 * What a threshold counts: a run. Request evidence ids end in the run key (src/core/evidence.ts),
 * so two facts about one run count once; a failed call counts as its run when the origins say
 * which (a failure retried twice in one turn is one failed run), else as itself.
 */
function factKey(e: Evidence, origins: EvidenceOrigins | undefined): string {
  const run = origins?.runs.get(e.evidence_id);
  if (run !== undefined) return run;
  if (e.kind === 'failed_call' || e.kind === 'successful_call') return e.evidence_id;
  return e.evidence_id.split(':').slice(2).join(':');
}

/** Distinct conversations of the evidence; without origins each run is its own. */
function conversationCount(found: readonly Evidence[], origins: EvidenceOrigins | undefined): number {
  return new Set(found.map((e) => origins?.conversations.get(e.evidence_id) ?? factKey(e, origins))).size;
}

/**
 * An error, once values are scrubbed (the evidence text already is) and digits masked, up to case
 * and spacing: two failed calls repeat an error when their signatures match.
 */
export function errorSignature(text: string): string {
  return normalize(withoutPlaceholders(text).replace(/\d+/g, '#'));
}

/** The largest group of failed calls sharing one error signature: its runs and conversations. */
export function largestErrorGroup(
  failed: readonly Evidence[],
  origins?: EvidenceOrigins,
): { runs: number; conversations: number } {
  const groups = new Map<string, Evidence[]>();
  for (const e of failed) {
    const key = errorSignature(e.text);
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  let best = { runs: 0, conversations: 0 };
  for (const group of groups.values()) {
    const runs = new Set(group.map((e) => factKey(e, origins))).size;
    const conversations = conversationCount(group, origins);
    if (runs > best.runs || (runs === best.runs && conversations > best.conversations)) best = { runs, conversations };
  }
  return best;
}

/**
 * A note quotes only what the errors of several conversations share (docs/security.md "Notes"):
 * each quoted part, values masked and digits aside, must occur in the cited errors of at least
 * `min_conversations` conversations — never one caller's error string verbatim.
 */
function quoteFailure(text: string, basis: readonly Evidence[], ctx: ProposalContext): Failure | null {
  const needed = ctx.settings.min_conversations ?? 1;
  for (const match of text.matchAll(/"([^"]*)"/g)) {
    const quoted = errorSignature((match[1] ?? '').replace(/…$/, ''));
    if (quoted === '') continue;
    const sharing = basis.filter((e) => errorSignature(e.text).includes(quoted));
    const conversations = conversationCount(sharing, ctx.origins);
    if (conversations < needed) {
      return {
        reason: 'quotes_one_caller',
        detail: `quotes "${match[1]}", which the errors of ${conversations} conversations share; needs at least ${needed}`,
      };
    }
  }
  return null;
}

/**
 * The share of the words an example adds to its tool (beyond the tool's own definition) that the
 * tool must have been seen asked in, in at least `min_conversations` conversations. Every word would
 * refuse a house term's new wording (its other words were typed once); measured on the realistic
 * agent's labelled traffic (docs/evaluation.md), half keeps nine examples in ten of those today's
 * rules learn and refuses nearly every wording credited to the wrong tool.
 */
export const SEEN_WORDS_SHARE = 0.5;

/**
 * The words of an example beyond its tool's own definition (name and description), and those of
 * them that the requests the tool finally served (hits and misses alike, in the log the review
 * read) used in fewer than `min_conversations` conversations. Nothing is unseen when the origins
 * do not say what the tool served.
 */
export function unseenWords(text: string, ctx: ProposalContext): { added: string[]; unseen: string[] } {
  const served = ctx.origins?.served;
  if (!served) return { added: [], unseen: [] };
  const seen = served.get(ctx.tool);
  const own = contentWords(`${splitIdentifier(ctx.tool)} ${ctx.definition ?? ''}`);
  const needed = ctx.settings.min_conversations ?? 1;
  const added = new Map<string, string>();
  for (const word of normalize(withoutPlaceholders(text)).split(' ')) {
    const s = stem(word);
    if (!isStopword(word) && s.length >= 3 && !own.has(s) && !added.has(s)) added.set(s, word);
  }
  const unseen = [...added].filter(([s]) => (seen?.get(s)?.size ?? 0) < needed).map(([, word]) => word);
  return { added: [...added.values()], unseen };
}

/**
 * docs/learning.md "Examples teach their words": an example whose added words its tool was mostly
 * not seen asked in (`unseenWords`, more than 1 - SEEN_WORDS_SHARE of them) is refused: it is
 * another tool's wording credited to this one in a conversation or so.
 */
function wordsFailure(text: string, ctx: ProposalContext): Failure | null {
  const { added, unseen } = unseenWords(text, ctx);
  if (added.length - unseen.length >= SEEN_WORDS_SHARE * added.length) return null;
  const needed = ctx.settings.min_conversations ?? 1;
  return {
    reason: 'below_threshold',
    detail: `${unseen.length} of the ${added.length} words it adds to ${ctx.tool} (${unseen.map((w) => `"${w}"`).join(', ')}) were asked of ${ctx.tool} in fewer than ${needed} conversations (min_conversations); at most half may be`,
  };
}

/**
 * docs/learning.md "The log decides who serves a wording": an example is refused when the requests
 * saying what it says were finally served by one other tool in more conversations (and in at least
 * `min_conversations`) than by its own, in the log the review read. The run it comes from credited
 * it to this tool; the rest of the log credits the same wording to another, and a wrong pick that
 * nobody corrected is the likelier story than most conversations being wrong.
 */
function majorityFailure(text: string, ctx: ProposalContext): Failure | null {
  const saying = ctx.origins?.servedRequests?.saying(contentWords(withoutPlaceholders(text)));
  if (!saying) return null;
  const own = saying.get(ctx.tool)?.size ?? 0;
  const needed = ctx.settings.min_conversations ?? 1;
  let other: [string, number] | null = null;
  for (const [tool, conversations] of saying) {
    if (tool !== ctx.tool && conversations.size > (other?.[1] ?? 0)) other = [tool, conversations.size];
  }
  if (other === null || other[1] <= own || other[1] < needed) return null;
  return {
    reason: 'contradicts',
    detail: `requests saying this were finally served by ${other[0]} in ${other[1]} conversations and by ${ctx.tool} in ${own}`,
  };
}

/** Requests and "Not for" lines: served by the named tool, and a word shared with each cited request. */
function basisFailure(basis: readonly Evidence[], line: NotForLine, ctx: ProposalContext): Failure | null {
  if (line.target !== null) {
    const other = basis.find((e) => e.served_by !== line.target);
    if (other) {
      return {
        reason: 'not_served_by_target',
        detail: `"${other.evidence_id}" was served by ${other.served_by ?? 'no tool'}`,
      };
    }
  }
  if (basis.every((e) => e.kind === 'failed_call')) return null;
  const words = contentWords(withoutPlaceholders(line.words));
  for (const e of basis) {
    const shared = [...contentWords(withoutPlaceholders(e.text))].some((w) => words.has(w));
    if (!shared) return { reason: 'no_shared_word', detail: `shares no word with "${e.evidence_id}"` };
  }
  return null;
}

/** Repeats of what the tool already has, or of a line accepted earlier in this reply. */
function duplicateFailure(
  kind: ProposalKind,
  text: string,
  accepted: readonly string[],
  ctx: ProposalContext,
): Failure | null {
  if (kind === 'request') {
    if (accepted.some((a) => saysTheSame(a, text)))
      return { reason: 'duplicate', detail: 'repeats an example proposed above' };
    // A synthetic twin is no duplicate: the learned wording replaces it at apply (docs/learning.md "Apply").
    const kept = ctx.existing.examples.find((e) => e.source !== 'synthetic' && saysTheSame(e.text, text));
    if (kept?.source === 'learned') return { reason: 'already_kept', detail: `says the same as "${kept.text}"` };
    if (kept) return { reason: 'duplicate', detail: `says the same as "${kept.text}"` };
    return null;
  }
  const existing = kind === 'note' ? ctx.existing.notes : ctx.existing.avoid;
  const key = normalize(text);
  const twin = [...existing, ...accepted].find((line) => normalize(line) === key);
  return twin === undefined ? null : { reason: 'duplicate', detail: `repeats "${twin}"` };
}

/**
 * docs/learning.md caps: notes and "Not for" lines count what the tool keeps; examples count this review
 * (`max_new_queries`) and what the tool keeps (`max_queries`). Synthetic examples give way to learned
 * ones at apply, so only the others fill the tool's places: an example with no place left would
 * only be refused at apply (`no_room`).
 */
function capFailure(kind: ProposalKind, accepted: readonly string[], ctx: ProposalContext): Failure | null {
  const s = ctx.settings;
  if (kind === 'request') {
    const kept = ctx.existing.examples.filter((e) => e.source !== 'synthetic').length;
    if (kept + accepted.length >= s.max_queries)
      return {
        reason: 'cap_reached',
        detail: `max_queries is ${s.max_queries}: the tool keeps ${kept} examples that are not synthetic`,
      };
  }
  const [count, cap, what] =
    kind === 'note'
      ? [ctx.existing.notes.length + accepted.length, s.max_notes, 'max_notes']
      : kind === 'avoid'
        ? [ctx.existing.avoid.length + accepted.length, s.max_avoid, 'max_avoid']
        : [accepted.length, s.max_new_queries, 'max_new_queries'];
  return count >= cap ? { reason: 'cap_reached', detail: `${what} is ${cap}` } : null;
}

function cut(text: string): string {
  return text.length > REFUSED_TEXT_CHARS ? `${text.slice(0, REFUSED_TEXT_CHARS)}…` : text;
}

/**
 * The example call is checked like a note (docs/learning.md "Example call"): one line, no text
 * aimed at the model, no argument value of the calls. Null when it passes.
 */
export function checkExampleCall(tool: string, line: string, values: readonly unknown[]): Refusal | null {
  const refuse = (reason: RefusalReason, detail: string): Refusal => ({
    tool,
    kind: 'call_example',
    text: cut(reason === 'argument_value' ? scrubValues(line, values) : line),
    reason,
    detail,
  });
  if (/[\r\n\u2028\u2029]/.test(line)) return refuse('not_one_line', 'the text spans more than one line');
  const aimed = checkLineText(line).refused;
  if (aimed) return refuse('aimed_at_model', aimed);
  if (findArgumentValue(line, values) !== null)
    return refuse('argument_value', 'contains a value passed in the arguments of a logged call');
  return null;
}
