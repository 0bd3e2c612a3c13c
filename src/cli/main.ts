/**
 * `whetstone` CLI, run by bin/whetstone.mjs. Every command is one client call; the
 * answer prints as a table, or as the API's JSON with `--json`. Exit codes scripts can trust:
 * 0 done, 1 refused by the API (or the API could not be reached), 2 usage (unknown command,
 * missing argument or setting, unreadable file).
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import {
  createClient,
  WhetstoneError,
  type FetchLike,
  type RevisionStatus,
  type ToolDef,
  type WhetstoneClient,
} from '../client/index.ts';
import * as show from './format.ts';

export const USAGE = `Usage: whetstone <command> [options]

Commands:
  tools                               list the agent's tools
  tools import <file>                 register tools from a JSON file: [ToolDef…] or {"tools": […]} [--augment]
  route <text…>                       the tools to offer for a request [--conversation ID] [--k N]
  review [--dry-run]                  read the log and propose revisions
  revisions [--tool T] [--status S]   revisions, newest first (S: proposed, applied, dismissed, undone)
  show <revision_id>                  one revision with its evidence
  apply <revision_id> --by <name>     apply a proposed revision
  dismiss <revision_id> --by <name>   close a proposed revision [--reason R]
  undo <tool> --by <name>             take back the tool's newest applied revision
  flags                               usage flags: tools offered but never called, never offered
  unregistered                        tool names seen in calls or traces but not registered
  quality [--tool T] [--days N]       routing hit rate per UTC day, and what each applied revision changed

Options (or environment):
  --url <url>       WHETSTONE_URL    default http://localhost:8787
  --token <token>   WHETSTONE_TOKEN  ADMIN_TOKEN or an agent key
  --agent <id>      WHETSTONE_AGENT
  --json            print the API's JSON answer (for scripts)

Exit codes: 0 done, 1 refused by the API or unreachable, 2 usage.`;

export const EXIT = { ok: 0, refused: 1, usage: 2 } as const;

export interface Io {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
  fetch?: FetchLike;
}

/** A mistake in the invocation: exit 2 with a message and the usage. */
class UsageError extends Error {}

const OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  agent: { type: 'string' },
  json: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  augment: { type: 'boolean' },
  tool: { type: 'string' },
  status: { type: 'string' },
  by: { type: 'string' },
  reason: { type: 'string' },
  conversation: { type: 'string' },
  k: { type: 'string' },
  days: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

/** Runs one invocation and returns the exit code. */
export async function main(argv: string[], io: Io): Promise<number> {
  try {
    const { values, positionals } = parse(argv);
    if (values.help || positionals.length === 0 || positionals[0] === 'help') {
      io.out(USAGE);
      return EXIT.ok;
    }
    const client = clientOf(values, io);
    const printed = await run(client, positionals, values);
    io.out(values.json ? JSON.stringify(printed.json, null, 2) : printed.text);
    return EXIT.ok;
  } catch (err) {
    return failure(err, argv.includes('--json'), io);
  }
}

function parse(argv: string[]): { values: Values; positionals: string[] } {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

function clientOf(values: Values, io: Io): WhetstoneClient {
  const url = values.url ?? io.env.WHETSTONE_URL ?? 'http://localhost:8787';
  const token = values.token ?? io.env.WHETSTONE_TOKEN;
  const agent = values.agent ?? io.env.WHETSTONE_AGENT;
  if (!token) throw new UsageError('no token: pass --token or set WHETSTONE_TOKEN');
  if (!agent) throw new UsageError('no agent: pass --agent or set WHETSTONE_AGENT');
  if (!/^https?:\/\//.test(url)) throw new UsageError(`--url must start with http:// or https:// (got ${url})`);
  return createClient({ url, token, agent, ...(io.fetch ? { fetch: io.fetch } : {}) });
}

interface Printed {
  json: unknown;
  text: string;
}

async function run(client: WhetstoneClient, [command, ...args]: string[], v: Values): Promise<Printed> {
  switch (command) {
    case 'tools':
      return tools(client, args, v);
    case 'route': {
      const request = args.join(' ');
      if (!request) throw new UsageError('route needs the request text');
      const result = await client.route({
        request,
        ...(v.conversation ? { conversation_id: v.conversation } : {}),
        ...(v.k ? { k: integer(v.k, '--k') } : {}),
      });
      return { json: result, text: show.routed(result) };
    }
    case 'review': {
      const review = await client.review({ dry_run: v['dry-run'] ?? false });
      return { json: review, text: show.reviewed(review) };
    }
    case 'revisions': {
      const answer = await client.revisions({
        ...(v.tool ? { tool: v.tool } : {}),
        ...(v.status ? { status: status(v.status) } : {}),
      });
      return { json: answer, text: show.revisionsTable(answer.revisions) };
    }
    case 'show': {
      const revision = await client.revision(one(args, 'show needs a revision id'));
      return { json: revision, text: show.revisionDetail(revision) };
    }
    case 'apply':
    case 'dismiss':
    case 'undo':
      return decide(
        client,
        command,
        one(args, `${command} needs ${command === 'undo' ? 'a tool name' : 'a revision id'}`),
        v,
      );
    case 'flags': {
      const answer = await client.flags();
      return { json: answer, text: show.flagsTable(answer.flags) };
    }
    case 'quality': {
      const answer = await client.quality({
        ...(v.tool ? { tool: v.tool } : {}),
        ...(v.days ? { days: integer(v.days, '--days') } : {}),
      });
      return { json: answer, text: show.qualityTables(answer) };
    }
    case 'unregistered': {
      const answer = await client.unregistered();
      return { json: answer, text: show.unregisteredTable(answer.tools) };
    }
    default:
      throw new UsageError(`unknown command: ${command ?? ''}`);
  }
}

async function tools(client: WhetstoneClient, [sub, file, ...rest]: string[], v: Values): Promise<Printed> {
  if (sub === undefined || sub === 'list') {
    const answer = await client.tools();
    return { json: answer, text: show.toolsTable(answer.tools) };
  }
  if (sub !== 'import') throw new UsageError(`unknown command: tools ${sub}`);
  if (!file || rest.length > 0) throw new UsageError('tools import needs exactly one file');
  const answer = await client.registerTools(await toolsFile(file), { augment: v.augment ?? false });
  return { json: answer, text: show.registered(answer) };
}

/** A tools file: a JSON array of definitions or an object with a `tools` array. */
async function toolsFile(path: string): Promise<ToolDef[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const list = Array.isArray(parsed) ? parsed : (parsed as { tools?: unknown } | null)?.tools;
  if (!Array.isArray(list)) throw new UsageError(`${path} is neither a JSON array of tools nor {"tools": […]}`);
  // The API checks each definition and answers 400 with the zod issues (exit 1).
  return list as ToolDef[];
}

async function decide(
  client: WhetstoneClient,
  command: 'apply' | 'dismiss' | 'undo',
  target: string,
  v: Values,
): Promise<Printed> {
  if (!v.by) throw new UsageError(`${command} needs --by <name> (who approves it)`);
  const revision =
    command === 'apply'
      ? await client.apply(target, { approved_by: v.by })
      : command === 'dismiss'
        ? await client.dismiss(target, { approved_by: v.by, ...(v.reason ? { reason: v.reason } : {}) })
        : await client.undo(target, { approved_by: v.by });
  const verb = { apply: 'applied', dismiss: 'dismissed', undo: 'undid' }[command];
  return {
    json: revision,
    text: `${verb} revision ${revision.revision_id} of ${revision.tool} (now ${revision.status}): ${show.additions(revision)}`,
  };
}

function one(args: string[], message: string): string {
  if (args.length !== 1 || !args[0]) throw new UsageError(message);
  return args[0];
}

function integer(text: string, name: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${name} must be a positive integer`);
  return n;
}

const STATUSES: readonly RevisionStatus[] = ['proposed', 'applied', 'dismissed', 'undone'];

function status(text: string): RevisionStatus {
  const found = STATUSES.find((s) => s === text);
  if (!found) throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
  return found;
}

function failure(err: unknown, json: boolean, io: Io): number {
  if (err instanceof UsageError) {
    io.err(`whetstone: ${err.message}\nRun "whetstone help" for the commands.`);
    return EXIT.usage;
  }
  if (err instanceof WhetstoneError) {
    const body = { error: { code: err.code, message: err.message, details: err.details } };
    io.err(json ? JSON.stringify(body, null, 2) : refusal(err));
    return EXIT.refused;
  }
  // fetch rejects with a TypeError when the server cannot be reached.
  io.err(`whetstone: cannot reach the API: ${err instanceof Error ? `${err.message}${causeOf(err)}` : String(err)}`);
  return EXIT.refused;
}

function refusal(err: WhetstoneError): string {
  const details = err.details.slice(0, 5).map((d) => `  ${JSON.stringify(d)}`);
  return [`whetstone: refused (${err.status} ${err.code}): ${err.message}`, ...details].join('\n');
}

function causeOf(err: Error): string {
  return err.cause instanceof Error ? ` (${err.cause.message})` : '';
}
