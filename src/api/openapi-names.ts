/**
 * operationId and tags for every route of `/openapi.json`, derived in one place from the method and
 * the path, so generated clients get stable, readable names (`listRevisions`, `applyRevision`) and
 * no route can be added without one.
 */

/** The subset of an OpenAPI operation this module reads and fills. */
interface Operation {
  operationId?: string;
  tags?: string[];
}

type PathItem = Record<string, Operation | unknown>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
/** Last path segments that name an action on the resource before them, not a collection. */
const ACTIONS = new Set(['apply', 'dismiss', 'try', 'undo', 'release', 'route', 'preview', 'mcp', 'export', 'import']);
/** Last path segments that name one thing of an agent or a tool, read with `get`, not listed. */
const SINGLETONS = new Set(['config', 'activity', 'quality', 'whoami', 'test-endpoint']);
/** Verbs a resource reads better with than `create`: calls and outcomes are reported, not made. */
const POST_VERBS: Record<string, string> = { calls: 'report', outcomes: 'report', traces: 'report' };

/** Fills `operationId` and `tags` on every operation of an OpenAPI `paths` object, in place. */
export function nameOperations(paths: Record<string, PathItem>): void {
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = item[method] as Operation | undefined;
      if (!op) continue;
      op.operationId ??= operationId(method, path);
      op.tags ??= [tagOf(path)];
    }
  }
}

/** The resource a path belongs to: the first segment after `/v1/agents/{agent}`, else `agents`. */
export function tagOf(path: string): string {
  const parts = resourceParts(path);
  const first = parts.find((p) => !p.startsWith('{'));
  return first ?? (path.startsWith('/v1/') ? 'agents' : 'service');
}

/**
 * `get` on a collection lists, on an item gets; `put` puts, `post` on a collection creates, on an
 * action names the action; `delete` deletes. Collections before an id read singular.
 */
export function operationId(method: string, path: string): string {
  if (!path.startsWith('/v1/')) return camel([method, ...path.split('/').filter(Boolean).map(clean)]);
  const parts = path === '/v1/agents' ? ['agents'] : resourceParts(path);
  const words: string[] = [];
  parts.forEach((part, i) => {
    if (part.startsWith('{')) return;
    const next = parts[i + 1];
    words.push(next?.startsWith('{') ? singular(part) : part);
  });
  const last = parts.at(-1) ?? '';
  const item = last.startsWith('{');
  const action = !item && ACTIONS.has(last);
  let verb: string;
  if (action) verb = method === 'get' ? 'get' : (words.pop() ?? method);
  else if (method === 'get') verb = item || SINGLETONS.has(last) ? 'get' : 'list';
  else if (method === 'post') verb = item ? 'post' : (POST_VERBS[last] ?? 'create');
  else verb = method;
  if (verb === 'create' && words.length > 0) words.push(singular(words.pop() ?? ''));
  if (verb === 'report' && last === 'traces') words.push(singular(words.pop() ?? ''));
  if (verb === 'delete' && path === '/v1/agents/{agent}') words.push('agent');
  return camel([verb, ...words]);
}

function resourceParts(path: string): string[] {
  const parts = path.split('/').filter(Boolean);
  // /v1/agents/{agent}/… → …
  return parts.slice(parts[2] === '{agent}' ? 3 : 2);
}

function singular(word: string): string {
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  return word.endsWith('s') ? word.slice(0, -1) : word;
}

function clean(word: string): string {
  return word.replace(/[^A-Za-z0-9]/g, '');
}

function camel(words: string[]): string {
  const flat = words.flatMap((w) => w.split(/[^A-Za-z0-9]+/)).filter(Boolean);
  return flat.map((w, i) => (i === 0 ? w.toLowerCase() : w[0]?.toUpperCase() + w.slice(1))).join('');
}
