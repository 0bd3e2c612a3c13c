/**
 * Usage reads (docs/learning.md): call counts of registered tools, unregistered names seen in calls
 * or traces, and the `tools=[…]` definitions traces send (trace_tools), in the agent's log database
 * (src/adapters/log-db.ts). The registered names come from the tool rows, passed as one JSON
 * parameter. Every read is bounded and served by an index of src/adapters/agent-log-schema.ts:
 * calls (agent, tool, seq), trace_tools by its (agent, name) primary key.
 */
import type { UnregisteredRow, UsageStore } from '../core/ports.ts';
import type { AuthorDefinition } from '../core/tooldef.ts';
import type { LogOf, LogStatement } from './log-db.ts';

/** Bound parameters per statement: at most 100. */
const TRACE_TOOL_COLUMNS = 4;
const TRACE_TOOLS_PER_STATEMENT = Math.floor(100 / TRACE_TOOL_COLUMNS);

/** Usage reads of the agent's log. Strongly consistent (one object); the trace_tools upsert joins a batch. */
export function createUsage(logOf: LogOf): UsageStore {
  return {
    /**
     * Every registered tool with 1 when it was ever called, else 0. The flags only ask "never
     * called?", so one index seek per tool answers it whatever the size of the log (a full count
     * grew from 5 ms at 1,000 calls to ~80 ms at 100,000).
     */
    async registeredCallCounts(
      agent: string,
      registered: readonly string[],
    ): Promise<{ tool: string; calls: number }[]> {
      const { results } = await logOf(agent)
        .prepare(
          `SELECT t.value AS tool, EXISTS (SELECT 1 FROM calls c WHERE c.agent = ?1 AND c.tool = t.value) AS calls
           FROM json_each(?2) t ORDER BY t.value`,
        )
        .bind(agent, JSON.stringify(registered))
        .all<{ tool: string; calls: number }>();
      return results;
    },

    /**
     * Names in the call log or in trace_tools with no tool row, most failures first, then most
     * calls, then by name; at most `limit`. last_seen_at is the newer of the last call and the last
     * trace that sent the definition. The distinct names come from a skip scan of the (agent, tool)
     * index (one seek per name), so only the calls of unregistered names are counted, not the log.
     */
    async unregisteredTools(agent: string, registered: readonly string[], limit: number): Promise<UnregisteredRow[]> {
      const { results } = await logOf(agent)
        .prepare(
          `WITH RECURSIVE registered(name) AS (SELECT value FROM json_each(?3)), names(name) AS (
             SELECT (SELECT MIN(tool) FROM calls WHERE agent = ?1)
             UNION ALL
             SELECT (SELECT MIN(tool) FROM calls WHERE agent = ?1 AND tool > names.name) FROM names WHERE names.name IS NOT NULL
           ), called AS (
             SELECT n.name, COUNT(*) AS call_count, SUM(CASE WHEN c.success = 0 THEN 1 ELSE 0 END) AS failure_count,
                    MAX(c.at) AS last_call_at
             FROM names n JOIN calls c ON c.agent = ?1 AND c.tool = n.name
             WHERE n.name NOT IN (SELECT name FROM registered)
             GROUP BY n.name
           ), defined AS (
             SELECT d.name, d.definition, d.seen_at FROM trace_tools d
             WHERE d.agent = ?1 AND d.name NOT IN (SELECT name FROM registered)
           )
           SELECT called.name, call_count, failure_count, MAX(last_call_at, COALESCE(seen_at, last_call_at)) AS last_seen_at, definition
           FROM called LEFT JOIN defined ON defined.name = called.name
           UNION ALL
           SELECT name, 0, 0, seen_at, definition FROM defined WHERE name NOT IN (SELECT name FROM called)
           ORDER BY failure_count DESC, call_count DESC, name
           LIMIT ?2`,
        )
        .bind(agent, limit, JSON.stringify(registered))
        .all<{
          name: string;
          call_count: number;
          failure_count: number;
          last_seen_at: string;
          definition: string | null;
        }>();
      return results.map((r) => ({
        ...r,
        definition: r.definition === null ? null : (JSON.parse(r.definition) as AuthorDefinition),
      }));
    },

    /** The arguments of each tool's most recent `perTool` calls, in one round trip. */
    async recentArguments(
      agent: string,
      tools: readonly string[],
      perTool: number,
    ): Promise<Map<string, Record<string, unknown>[]>> {
      if (tools.length === 0) return new Map();
      const db = logOf(agent);
      const statement = db.prepare(
        'SELECT arguments FROM calls WHERE agent = ?1 AND tool = ?2 ORDER BY seq DESC LIMIT ?3',
      );
      const results = await db.batch<{ arguments: string }>(tools.map((t) => statement.bind(agent, t, perTool)));
      return new Map(
        tools.map((t, i) => [
          t,
          (results[i]?.results ?? []).map((r) => JSON.parse(r.arguments) as Record<string, unknown>),
        ]),
      );
    },

    /** Upserts of the definitions a trace sent (the newest wins), to join the trace's batch. */
    traceToolStatements(agent: string, definitions: readonly AuthorDefinition[], now: string): LogStatement[] {
      const db = logOf(agent);
      const statements: LogStatement[] = [];
      for (let i = 0; i < definitions.length; i += TRACE_TOOLS_PER_STATEMENT) {
        const chunk = definitions.slice(i, i + TRACE_TOOLS_PER_STATEMENT);
        const placeholders = chunk
          .map((_, j) => `(?${j * 4 + 1}, ?${j * 4 + 2}, ?${j * 4 + 3}, ?${j * 4 + 4})`)
          .join(', ');
        statements.push(
          db
            .prepare(
              `INSERT INTO trace_tools (agent, name, definition, seen_at) VALUES ${placeholders}
               ON CONFLICT (agent, name) DO UPDATE SET definition = excluded.definition, seen_at = excluded.seen_at`,
            )
            .bind(...chunk.flatMap((d) => [agent, d.name, JSON.stringify(d), now])),
        );
      }
      return statements;
    },
  };
}
