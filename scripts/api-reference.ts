/**
 * docs/api-reference.md, generated from the served `/openapi.json` (which the zod schemas of
 * src/schemas.ts and src/api/*.ts produce): every route with its operationId, who may call it,
 * its parameters, body and answers. `test/node/openapi.test.ts` checks the file is up to date and
 * rewrites it with `UPDATE_DOCS=1`.
 */

interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  description?: string;
}

interface Operation {
  operationId?: string;
  summary?: string;
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema; description?: string }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>;
}

export interface OpenApiDoc {
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** A short type for a schema: a component name, a list of one, an enum, or the JSON type. */
function typeOf(s: Schema | undefined): string {
  if (!s) return '';
  if (s.$ref) return s.$ref.split('/').at(-1) ?? '';
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' \\| ');
  if (s.items) return `${typeOf(s.items)}[]`;
  const alt = s.anyOf ?? s.oneOf;
  if (alt) return alt.map(typeOf).join(' \\| ');
  if (Array.isArray(s.type)) return s.type.join(' \\| ');
  return s.type ?? 'object';
}

function fields(s: Schema | undefined, doc: OpenApiDoc): string {
  const resolved = s?.$ref ? doc.components?.schemas?.[s.$ref.split('/').at(-1) ?? ''] : s;
  const props = resolved?.properties;
  if (!props) return typeOf(s);
  const required = new Set(resolved?.required ?? []);
  const name = s?.$ref ? `${typeOf(s)}: ` : '';
  return `${name}${Object.entries(props)
    .map(([k, v]) => `\`${k}\`${required.has(k) ? '' : '?'} ${typeOf(v)}`)
    .join(', ')}`;
}

/** The markdown reference of an OpenAPI document. */
export function apiReference(doc: OpenApiDoc): string {
  const lines = [
    '# API reference',
    '',
    `Generated from \`/openapi.json\` (${doc.info.title} ${doc.info.version}) by \`scripts/api-reference.ts\`;`,
    'do not edit by hand. [docs/api.md](api.md) explains the routes, errors and limits in prose.',
    '',
  ];
  const byTag = new Map<string, string[]>();
  for (const path of Object.keys(doc.paths).sort()) {
    for (const method of METHODS) {
      const op = doc.paths[path]?.[method];
      if (!op) continue;
      const out: string[] = [];
      out.push(`### \`${method.toUpperCase()} ${path}\``, '');
      out.push(`${op.summary ?? ''} — \`${op.operationId ?? ''}\``, '');
      for (const p of op.parameters ?? [])
        out.push(
          `- ${p.in} \`${p.name}\`${p.required ? '' : '?'}: ${typeOf(p.schema)}${p.description ? ` — ${p.description}` : ''}`,
        );
      const body = op.requestBody?.content?.['application/json']?.schema;
      if (body) out.push(`- body: ${fields(body, doc)}`);
      for (const [status, r] of Object.entries(op.responses ?? {})) {
        // A 200 "unused" is the shared error block's filler on routes that answer 204.
        if (r.description === 'unused') continue;
        const schema = r.content?.['application/json']?.schema;
        out.push(
          `- ${status}: ${r.description ?? ''}${schema && status.startsWith('2') ? ` (${typeOf(schema)})` : ''}`,
        );
      }
      out.push('');
      const tag = op.tags?.[0] ?? 'other';
      byTag.set(tag, [...(byTag.get(tag) ?? []), ...out]);
    }
  }
  for (const [tag, out] of [...byTag].sort(([a], [b]) => a.localeCompare(b))) lines.push(`## ${tag}`, '', ...out);
  return `${lines.join('\n').trimEnd()}\n`;
}
