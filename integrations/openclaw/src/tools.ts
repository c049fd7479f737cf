/**
 * The agent's tools: long-term memory (`memory_search`, `memory_get`,
 * `memory_store`) and the compacted history of the current session
 * (`lcm_grep`, `lcm_expand_query`). Each answers `{ok, data}` or
 * `{ok: false, error}` as JSON text; a failure is the tool's answer, never an
 * exception in the host.
 */

import type { Caller, MemorydClient } from "@memoryd/client";
import type { AnyAgentTool, OpenClawPluginToolContext } from "openclaw/plugin-sdk/plugin-entry";
import { agentFor, type Settings } from "./config.js";
import type { Conversations } from "./conversation.js";
import { conversationPath } from "./engine.js";

type Tool = AnyAgentTool;

const SOURCE = "openclaw";

function answer(data: unknown, ok = true) {
  const body = ok ? { ok, data } : { ok, error: data };
  return { content: [{ type: "text" as const, text: JSON.stringify(body) }], details: body };
}

const str = (description: string) => ({ type: "string", description });

function tool(
  name: string,
  description: string,
  properties: Record<string, unknown>,
  required: string[],
  run: (params: Record<string, unknown>) => Promise<unknown>,
): Tool {
  return {
    name,
    label: name,
    description,
    parameters: { type: "object", properties, required, additionalProperties: false },
    async execute(_id: string, params: Record<string, unknown>) {
      try {
        return answer(await run(params ?? {}));
      } catch (error) {
        return answer(error instanceof Error ? error.message : String(error), false);
      }
    },
  } as unknown as Tool;
}

export function memoryTools(
  client: MemorydClient,
  settings: Settings,
  conversations: Conversations,
  ctx: OpenClawPluginToolContext,
): Tool[] {
  const session = ctx.sessionId ? conversations.id(ctx.sessionId) : "";
  const caller: Caller = { agentId: agentFor(settings, ctx.agentId), sessionId: session || undefined };
  return [
    tool(
      "memory_search",
      "Search the user's long-term memory (every earlier session) for facts, preferences and decisions.",
      { query: str("what to look for"), limit: { type: "integer", minimum: 1, maximum: 50 } },
      ["query"],
      (p) => client.request("GET", "/v1/memories/search", undefined, caller, { q: String(p.query), limit: Number(p.limit ?? 10) }),
    ),
    tool(
      "memory_get",
      "Fetch one memory by id, verbatim.",
      { id: str("memory id (or a unique prefix)") },
      ["id"],
      (p) => client.request("GET", `/v1/memories/${encodeURIComponent(String(p.id))}`, undefined, caller),
    ),
    tool(
      "memory_store",
      "Store a fact, preference or decision in long-term memory, for later sessions.",
      { content: str("the memory, one self-contained statement"), tags: { type: "array", items: { type: "string" } } },
      ["content"],
      (p) =>
        client.request(
          "POST",
          "/v1/memories",
          { content: String(p.content), tags: Array.isArray(p.tags) ? p.tags.map(String) : undefined, source: SOURCE, agent_id: caller.agentId, session_id: caller.sessionId },
          caller,
        ),
    ),
    tool(
      "lcm_grep",
      "Search this session's compacted history (exact phrases and words) when a summary lacks a detail.",
      { query: str("phrase or words"), limit: { type: "integer", minimum: 1, maximum: 100 } },
      ["query"],
      (p) => client.request("POST", conversationPath(session, "grep"), { query: String(p.query), limit: Number(p.limit ?? 20) }, caller),
    ),
    tool(
      "lcm_expand_query",
      "Expand a summary (by id, from lcm_grep or a <memoryd-summary> block) or the best matches of a query back to the exact messages.",
      { summary_id: str("a summary or message id"), query: str("or: what to expand") },
      [],
      (p) =>
        client.request(
          "POST",
          conversationPath(session, "expand"),
          p.summary_id ? { summary_id: String(p.summary_id) } : { query: String(p.query ?? "") },
          caller,
        ),
    ),
  ];
}
