/**
 * The realistic agent of the learning evaluation (`npm run eval -- --agent realistic --seed N`):
 * traffic as a real agent and its users make it, with every label kept for the measures
 * (scripts/eval-realistic-measure.ts).
 *
 * A round asks every ToolE tool its training wordings once (the 10-wording protocol) and every
 * generated tool (eval-realistic-data.ts) its generated wordings once, as tasks in conversations:
 *
 * - a task is one to three steps: a lookup (`lookup_record` / `get_account`) part of the time, the
 *   change (the tool the wording truly belongs to), then by habit a notification (`send_email` /
 *   `send_notification`) in most runs, whatever was asked;
 * - requests carry generated personal values ("… for Ana Pereira", "… for order 4471-XK",
 *   "… for $1,250.00"), passed to the calls in their argument form (1250);
 * - follow-ups: a second task in the same conversation that builds on the first, worded with a
 *   reference back ("now …", "also …", "… for that one", "… for Ana"), or sharing only a value
 *   (the same city, name or order number);
 * - re-asks: the agent calls a wrong offered tool (which answers) and the user asks again with
 *   another training wording of the same tool, sometimes with "no, I meant …"; chains wrong →
 *   re-ask → wrong → re-ask → right; misses where nothing was called, then a re-ask in words that
 *   share none with the first;
 * - a wrong tool that answered and was not corrected gets an outcome `{ok: false}` part of the time;
 * - retries: a call fails with an error quoting personal values ("Card 4111 … declined for Ana
 *   Pereira") and is retried once or twice in the same turn with the same error, then works; tools
 *   with a planted argument mistake fail the same way across conversations (a usage note is due);
 * - multi-tool requests: two wordings of different tools joined with "and", both tools called.
 *
 * Labels: for every run, the tool(s) that truly served its request (the chain's last tool for every
 * run of a chain; none when nothing did), and for every two consecutive runs of a conversation
 * whether the second re-asks the first or is a follow-up. Every draw is seeded.
 */
import type { EvalQuery } from './eval-data.ts';
import { mulberry32 } from './eval-data.ts';
import type { EvalCall, Routed } from './eval-http.ts';
import {
  ARGUMENT_OF,
  GENERATED_TOOLS,
  type Persona,
  type PersonalValue,
  type ValueBook,
  wordsOf,
} from './eval-realistic-data.ts';

/** Share of runs that look something up before the change. */
export const LOOKUP_RATE = 0.3;
/** Share of runs with a change that then send a notification by habit, whatever was asked. */
export const NOTIFY_RATE = 0.7;
/** Share of runs whose right tool was offered where the agent still calls another offered tool. */
export const WRONG_WHEN_OFFERED = 0.08;
/** When the right tool was not offered: share found by searching, share with no call at all (else a wrong tool). */
export const FIND_RATE = 0.4;
export const NOTHING_RATE = 0.2;
/** After a wrong tool answered: share re-asked; of the rest, share reported with an outcome `ok: false`. */
export const REASK_AFTER_WRONG = 0.65;
export const OUTCOME_RATE = 0.6;
/** Share of re-asks after a wrong tool worded as a correction ("no, I meant …"). */
export const CORRECTION_RATE = 0.4;
/** After no call: share re-asked (in words that share none with the first request). */
export const REASK_AFTER_NOTHING = 0.8;
/** Share of first re-asks where the agent picks a wrong tool again (a chain of two re-asks). */
export const CHAIN_RATE = 0.3;
/** Re-asks per task at most: the last one is served. */
export const MAX_REASKS = 2;
/** Share of change calls that fail with an error quoting personal values, retried in the same turn. */
export const TRANSIENT_RATE = 0.05;
/** Share of ToolE tools with a planted argument mistake, and share of their calls that make it. */
export const MISTAKE_TOOL_SHARE = 0.1;
export const MISTAKE_RATE = 0.5;
/** Share of tasks joined with the next one into a multi-tool request. */
export const MULTI_RATE = 0.1;
/** Share of tasks followed in their conversation by another task; of those, share that share only a value. */
export const FOLLOW_UP_RATE = 0.3;
export const VALUE_ONLY_SHARE = 0.35;
/** Share of requests that name the customer, and that carry a second value. */
export const NAME_RATE = 0.5;
export const SECOND_VALUE_RATE = 0.6;

/** The argument the planted mistake is about, and its error (the agent passes the customer's email). */
export const PLANTED_ARGUMENT = 'record_ref';
export const plantedError = (value: string): string =>
  `${PLANTED_ARGUMENT} "${value}" not found; references start with REF-`;

/** FNV-1a of a key. */
function hash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The ToolE tools with a planted argument mistake for a seed (a seeded draw on the name). */
export function plantedTools(tools: readonly string[], seed: number): Set<string> {
  return new Set(tools.filter((t) => hash(`planted:${seed}:${t}`) / 2 ** 32 < MISTAKE_TOOL_SHARE));
}

/** One run (a routed turn and the calls of the agent for it), with its labels. */
export interface RunLabel {
  run: number;
  round: number;
  conversation: string;
  request: string;
  /** The wordings the request was built from, with the tool each belongs to. */
  wordings: { text: string; tool: string }[];
  /** The tools that truly served this request (several for a multi-tool run; none when nothing did). */
  served_by: string[];
  turn_id: string;
  offered: string[];
  calls: EvalCall[];
  /** What the run was: the first ask of a task, a re-ask, or a follow-up task. */
  kind: 'task' | 'reask' | 'correction' | 'reask_disjoint' | 'follow_up' | 'value_follow_up' | 'multi';
  /** `ok` of the outcome reported for the turn, or null. */
  outcome: boolean | null;
  /** Ids of the generated values in its request, arguments and errors. */
  values: number[];
}

/** Two consecutive runs of a conversation: is the second a re-ask of the first, or a follow-up task? */
export interface PairLabel {
  first: number;
  next: number;
  label: 'reask' | 'follow_up';
  kind: RunLabel['kind'];
}

/** Every label of one seed's traffic. */
export interface Labels {
  runs: RunLabel[];
  pairs: PairLabel[];
  planted: string[];
}

/** What a round routes: a function that routes one request in a conversation (the Worker's `/route`). */
export type RouteOne = (request: string, conversation: string) => Promise<Routed>;

/** A task of the round's plan: one wording, or two (multi-tool); a follow-up names how it links back. */
interface Task {
  wordings: EvalQuery[];
}
type ConversationPlan =
  | { type: 'single'; task: Task }
  | { type: 'follow_up'; first: Task; next: Task; valueOnly: boolean };

/** Words that do not count as a shared word when the generator picks a wording that shares none. */
const FILLER = new Set(
  'a an the i me my you your can could would will please to of for in on at and or is are be with do does it this that what how some any get find help need want tell give show me about'.split(
    ' ',
  ),
);
function words(text: string): Set<string> {
  return new Set(wordsOf(text).filter((w) => !FILLER.has(w)));
}
function sharesWord(a: string, b: string): boolean {
  const wa = words(a);
  for (const w of words(b)) if (wa.has(w)) return true;
  return false;
}

/** "Can you book it?" + " for Ana" → "Can you book it for Ana?" (the final punctuation kept last). */
export function withSuffix(text: string, suffix: string): string {
  const m = /^(.*?)([?.!]*)\s*$/s.exec(text);
  const body = m?.[1] ?? text;
  const end = m?.[2] ?? '';
  return `${body}${suffix}${end}`;
}
const lowerFirst = (s: string): string => (/^[A-Z][a-z]/.test(s) ? s[0]?.toLowerCase() + s.slice(1) : s);
const stripEnd = (s: string): string => s.replace(/[?.!\s]+$/, '');

/** The generator of one seed: the plan of each round and the agent that runs it against routing. */
export class RealisticAgent {
  readonly labels: Labels;
  private readonly planted: Set<string>;
  private readonly byTool: Map<string, EvalQuery[]>;
  private readonly generated = new Set(GENERATED_TOOLS.map((t) => t.name));
  private callCount = 0;

  constructor(
    private readonly seed: number,
    /** Each ToolE tool's traffic wordings (the first N training wordings), and the generated tools'. */
    private readonly streams: readonly EvalQuery[][],
    private readonly book: ValueBook,
  ) {
    this.byTool = new Map(streams.flatMap((s) => (s[0] ? [[s[0].tool, s] as const] : [])));
    const toole = [...this.byTool.keys()].filter((t) => !this.generated.has(t));
    this.planted = plantedTools(toole, seed);
    this.labels = { runs: [], pairs: [], planted: [...this.planted].sort() };
  }

  isPlanted(tool: string): boolean {
    return this.planted.has(tool);
  }

  /** The round's conversations: every wording once, grouped into single, multi-tool and follow-up tasks. */
  plan(round: number): ConversationPlan[] {
    const random = mulberry32(hash(`plan:${this.seed}:${round}`));
    const all = this.streams.flat();
    for (let i = all.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [all[i], all[j]] = [all[j] as EvalQuery, all[i] as EvalQuery];
    }
    const out: ConversationPlan[] = [];
    const used = new Set<EvalQuery>();
    // The next unused wording of another ToolE tool (for a partner task), optionally sharing no word with `text`.
    const partner = (from: number, tool: string, disjointFrom?: string): EvalQuery | undefined => {
      for (let k = from + 1; k < Math.min(all.length, from + 200); k++) {
        const q = all[k];
        if (!q || used.has(q) || q.tool === tool || this.generated.has(q.tool)) continue;
        if (disjointFrom !== undefined && sharesWord(disjointFrom, q.text)) continue;
        return q;
      }
      return undefined;
    };
    all.forEach((q, i) => {
      if (used.has(q)) return;
      used.add(q);
      const r = random();
      const toole = !this.generated.has(q.tool);
      if (toole && r < MULTI_RATE) {
        const b = partner(i, q.tool);
        if (b) {
          used.add(b);
          out.push({ type: 'single', task: { wordings: [q, b] } });
          return;
        }
      }
      if (toole && r < MULTI_RATE + FOLLOW_UP_RATE) {
        const valueOnly = random() < VALUE_ONLY_SHARE;
        const b = partner(i, q.tool, valueOnly ? q.text : undefined);
        if (b) {
          used.add(b);
          out.push({ type: 'follow_up', first: { wordings: [q] }, next: { wordings: [b] }, valueOnly });
          return;
        }
      }
      out.push({ type: 'single', task: { wordings: [q] } });
    });
    return out;
  }

  /** Runs one conversation of the plan against routing; the runs and pairs go to the labels. */
  async converse(round: number, index: number, plan: ConversationPlan, route: RouteOne): Promise<void> {
    const conversation = `s${this.seed}-r${round}-c${index}`;
    const random = mulberry32(hash(`conversation:${conversation}`));
    const persona = this.book.persona();
    const convo: Conversation = { id: conversation, round, random, persona, route, runs: [] };
    if (plan.type === 'single') {
      await this.task(convo, plan.task, 'plain');
    } else {
      const shared = plan.valueOnly ? this.sharedValue(random, persona) : null;
      await this.task(convo, plan.first, shared ? { value: shared, first: true } : 'plain');
      await this.task(convo, plan.next, shared ? { value: shared, first: false } : 'follow_up');
    }
  }

  /** The value a value-only pair shares: a city, the customer's name or an order number. */
  private sharedValue(random: () => number, persona: Persona): { value: PersonalValue; suffix: string } {
    const r = random();
    if (r < 0.34) return { value: persona.city, suffix: ` in ${persona.city.text}` };
    if (r < 0.67) return { value: persona.name, suffix: ` for ${persona.name.text}` };
    // A bare number: "for order …" in both requests would share the word "order".
    const order = this.book.order();
    return { value: order, suffix: ` (${order.text})` };
  }

  /** The values a request carries (in its text) beyond a shared one, with their suffixes. */
  private requestValues(c: Conversation): { value: PersonalValue; suffix: string }[] {
    const out: { value: PersonalValue; suffix: string }[] = [];
    const p = c.persona;
    if (c.random() < NAME_RATE) out.push({ value: p.name, suffix: ` for ${p.name.text}` });
    if (out.length === 0 || c.random() < SECOND_VALUE_RATE) {
      const kinds = ['email', 'phone', 'card', 'iban', 'amount', 'date', 'address', 'order', 'city'] as const;
      const kind = kinds[Math.floor(c.random() * kinds.length)] ?? 'order';
      const v =
        kind === 'amount'
          ? this.book.amount()
          : kind === 'date'
            ? this.book.date()
            : kind === 'order'
              ? this.book.order()
              : p[kind];
      const suffix = {
        email: ` (my email is ${v.text})`,
        phone: `, my number is ${v.text}`,
        card: ` with card ${v.text}`,
        iban: ` to IBAN ${v.text}`,
        amount: ` for ${v.text}`,
        date: ` on ${v.text}`,
        address: ` at ${v.text}`,
        order: ` for order ${v.text}`,
        city: ` in ${v.text}`,
      }[kind];
      out.push({ value: v, suffix });
    }
    return out;
  }

  /**
   * One task: its first ask, then re-asks until served or dropped. `link` says how its first run
   * relates to the run before it in the conversation (a follow-up, or a pair sharing a value).
   */
  private async task(
    c: Conversation,
    task: Task,
    link: 'plain' | 'follow_up' | { value: { value: PersonalValue; suffix: string }; first: boolean },
  ): Promise<void> {
    const intended = [...new Set(task.wordings.map((w) => w.tool))];
    const multi = intended.length > 1;
    // The second request of a value-only pair carries the shared value alone (no other word in common).
    const values =
      typeof link === 'object'
        ? [
            link.value,
            ...(!link.first || c.random() < 0.5
              ? []
              : this.requestValues(c).filter((v) => v.value !== link.value.value)),
          ]
        : link === 'follow_up'
          ? []
          : this.requestValues(c);
    const taskValues = values.map((v) => v.value);
    const suffix = values.map((v) => v.suffix).join('');
    let request: string;
    let kind: RunLabel['kind'];
    const [a, b] = task.wordings;
    if (!a) return;
    if (multi && b) {
      request = withSuffix(`${stripEnd(a.text)} and ${lowerFirst(b.text)}`, suffix);
      kind = 'multi';
    } else if (link === 'follow_up') {
      const r = c.random();
      const firstName = c.random() < 0.3 ? ` for ${c.persona.first}` : '';
      if (r < 0.35) request = withSuffix(`Now ${lowerFirst(a.text)}`, firstName);
      else if (r < 0.6) request = withSuffix(`Also, ${lowerFirst(a.text)}`, firstName || ' for that one');
      else if (r < 0.8) request = withSuffix(a.text, ' for that one');
      else request = withSuffix(`${a.text.replace(/[?.!\s]+$/, '')}, with it too`, firstName);
      if (firstName) taskValues.push(c.persona.name);
      kind = 'follow_up';
    } else {
      request = withSuffix(a.text, suffix);
      kind = typeof link === 'object' && !link.first ? 'value_follow_up' : 'task';
    }
    // Follow-ups act for the conversation's customer; every request value is an argument of its calls.
    const argValues = link === 'follow_up' ? [c.persona.name, ...taskValues.slice(1)] : taskValues;
    const chain: RunLabel[] = [];
    const asked = new Set<string>(task.wordings.map((w) => w.text));
    for (let reasks = 0; ; reasks++) {
      const run = await this.route(c, request, task.wordings, kind, taskValues);
      chain.push(run);
      const offeredAll = intended.every((t) => run.offered.includes(t));
      let action: 'serve' | 'wrong' | 'nothing';
      if (multi || reasks >= MAX_REASKS || this.generated.has(intended[0] ?? '')) action = 'serve';
      else if (reasks === 1 && c.random() < CHAIN_RATE) action = 'wrong';
      else if (offeredAll) action = c.random() < WRONG_WHEN_OFFERED ? 'wrong' : 'serve';
      else {
        const r = c.random();
        action = r < FIND_RATE ? 'serve' : r < FIND_RATE + NOTHING_RATE ? 'nothing' : 'wrong';
      }
      const wrongTool = run.offered.find((t) => !intended.includes(t));
      if (action === 'wrong' && wrongTool === undefined) action = 'serve';
      if (action === 'serve') {
        this.serve(c, run, intended, argValues);
        for (const r of chain) r.served_by = intended;
        return;
      }
      if (action === 'wrong' && wrongTool !== undefined) {
        run.calls.push(this.call(c, run, wrongTool, this.argsOf(argValues, wrongTool), true));
        if (!this.generated.has(wrongTool)) for (const v of argValues) this.note(run, v);
        const reask = reasks === 1 || c.random() < REASK_AFTER_WRONG;
        if (!reask) {
          if (c.random() < OUTCOME_RATE) run.outcome = false;
          return;
        }
        const next = this.another(intended[0] ?? '', asked, null, c.random);
        if (!next) return;
        asked.add(next.text);
        const correction = c.random() < CORRECTION_RATE;
        request = withSuffix(correction ? `No, I meant ${lowerFirst(next.text)}` : next.text, suffix);
        kind = correction ? 'correction' : 'reask';
        task = { wordings: [next] };
        continue;
      }
      // Nothing called: the user asks again in words that share none with the first request.
      if (c.random() >= REASK_AFTER_NOTHING) return;
      const next = this.another(intended[0] ?? '', asked, request, c.random);
      if (!next) return;
      asked.add(next.text);
      request = next.text;
      kind = 'reask_disjoint';
      task = { wordings: [next] };
    }
  }

  /** Another wording of the tool not asked yet in this task; when `disjointFrom`, one sharing no word with it if any. */
  private another(
    tool: string,
    asked: ReadonlySet<string>,
    disjointFrom: string | null,
    random: () => number,
  ): EvalQuery | undefined {
    const others = (this.byTool.get(tool) ?? []).filter((q) => !asked.has(q.text));
    const disjoint = disjointFrom === null ? [] : others.filter((q) => !sharesWord(disjointFrom, q.text));
    const pool = disjoint.length > 0 ? disjoint : others;
    return pool[Math.floor(random() * pool.length)];
  }

  /** Routes a request in the conversation and opens its run (labelled, with the pair it makes with the run before). */
  private async route(
    c: Conversation,
    request: string,
    wordings: readonly EvalQuery[],
    kind: RunLabel['kind'],
    values: readonly PersonalValue[],
  ): Promise<RunLabel> {
    const routed = await c.route(request, c.id);
    const run: RunLabel = {
      run: this.labels.runs.length,
      round: c.round,
      conversation: c.id,
      request,
      wordings: wordings.map((w) => ({ text: w.text, tool: w.tool })),
      served_by: [],
      turn_id: routed.turn_id,
      offered: routed.offered,
      calls: [],
      kind,
      outcome: null,
      values: values.map((v) => v.id),
    };
    this.labels.runs.push(run);
    const before = c.runs.at(-1);
    if (before) {
      const reask = kind === 'reask' || kind === 'correction' || kind === 'reask_disjoint';
      this.labels.pairs.push({ first: before.run, next: run.run, label: reask ? 'reask' : 'follow_up', kind });
    }
    c.runs.push(run);
    return run;
  }

  /** The served run's calls: a lookup, failures and retries, the change(s), a notification by habit. */
  private serve(c: Conversation, run: RunLabel, tools: readonly string[], values: readonly PersonalValue[]): void {
    const p = c.persona;
    const generated = tools.every((t) => this.generated.has(t));
    if (!generated && c.random() < LOOKUP_RATE) {
      const order = values.find((v) => v.kind === 'order');
      if (order) run.calls.push(this.call(c, run, 'lookup_record', { order_id: order.arg }, true));
      else run.calls.push(this.call(c, run, 'get_account', { email: p.email.arg }, true));
      this.note(run, order ?? p.email);
    }
    for (const tool of tools) {
      const args = this.argsOf(values, tool);
      for (const v of values) this.note(run, v);
      if (this.planted.has(tool) && c.random() < MISTAKE_RATE) {
        run.calls.push(
          this.call(c, run, tool, { ...args, [PLANTED_ARGUMENT]: p.email.arg }, false, plantedError(p.email.text)),
        );
        this.note(run, p.email);
      }
      if (!generated && c.random() < TRANSIENT_RATE) {
        const { error, used } = this.transientError(c, values);
        const tries = c.random() < 0.5 ? 2 : 3;
        for (let i = 0; i < tries; i++) run.calls.push(this.call(c, run, tool, args, false, error));
        for (const v of used) this.note(run, v);
      }
      // From the run, not its turn id: the Worker draws turn ids at random, and the same seed sends the same calls.
      const ref = this.planted.has(tool)
        ? { [PLANTED_ARGUMENT]: `REF-${10000 + (hash(`${run.conversation}:${run.run}`) % 90000)}` }
        : {};
      run.calls.push(this.call(c, run, tool, { ...args, ...ref }, true));
    }
    if (!generated && c.random() < NOTIFY_RATE) {
      if (c.random() < 0.6) {
        run.calls.push(this.call(c, run, 'send_email', { to: p.email.arg, subject: 'Your request is done' }, true));
        this.note(run, p.email);
      } else {
        run.calls.push(this.call(c, run, 'send_notification', { recipient: p.phone.arg, message: 'Done' }, true));
        this.note(run, p.phone);
      }
    }
    if (generated) {
      // Asked for by name: the generated tool acts for the customer.
      const tool = tools[0] ?? '';
      const args = tool === 'send_notification' ? { recipient: p.phone.arg } : { email: p.email.arg, to: p.email.arg };
      run.calls.push(this.call(c, run, tool, args, true));
      this.note(run, tool === 'send_notification' ? p.phone : p.email);
    }
  }

  /** An error that quotes personal values, in their typed form (not the argument's). */
  private transientError(c: Conversation, values: readonly PersonalValue[]): { error: string; used: PersonalValue[] } {
    const p = c.persona;
    const r = c.random();
    if (r < 0.3) return { error: `Card ${p.card.text} declined for ${p.name.text}`, used: [p.card, p.name] };
    if (r < 0.55) {
      const order = values.find((v) => v.kind === 'order') ?? this.book.order();
      return { error: `order ${order.text} not found for ${p.email.text}`, used: [order, p.email] };
    }
    if (r < 0.8) {
      const amount = values.find((v) => v.kind === 'amount') ?? this.book.amount();
      return {
        error: `Transfer of ${amount.text} to ${p.iban.text} rejected: the account is on hold`,
        used: [amount, p.iban],
      };
    }
    return { error: `Could not reach ${p.name.text} at ${p.phone.text}: carrier timeout`, used: [p.name, p.phone] };
  }

  /** The arguments of a change call: every value of the request in its argument form. */
  private argsOf(values: readonly PersonalValue[], tool: string): Record<string, unknown> {
    const args: Record<string, unknown> = {};
    if (this.generated.has(tool)) return args;
    for (const v of values) args[ARGUMENT_OF[v.kind]] = v.arg;
    return args;
  }

  private call(
    c: Conversation,
    run: RunLabel,
    tool: string,
    args: Record<string, unknown>,
    success: boolean,
    error?: string,
  ): EvalCall {
    this.callCount++;
    return {
      id: `${c.id}-${this.callCount}`,
      tool,
      arguments: args,
      success,
      ...(error === undefined ? {} : { error }),
      request: run.request,
      turn_id: run.turn_id,
      conversation_id: c.id,
    };
  }

  private note(run: RunLabel, v: PersonalValue): void {
    if (!run.values.includes(v.id)) run.values.push(v.id);
  }
}

interface Conversation {
  id: string;
  round: number;
  random: () => number;
  persona: Persona;
  route: RouteOne;
  runs: RunLabel[];
}
