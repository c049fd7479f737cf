/**
 * memoryd for OpenCode (`@opencode-ai/plugin`): the first system prompt of a
 * session carries what memoryd recalls for its first message, every turn is
 * captured, "remember that …" becomes a pinned memory, the conversation is
 * saved before OpenCode compacts it, and the agent gets memory tools. All of
 * it is delegated to a memoryd server; see docs/opencode.md.
 *
 * Memories written here carry two container tags (seed 000 §3.2): the user's
 * and the project's (hashes of the git author e-mail or user name, and of the
 * project directory), so `memory_search` can keep to the project.
 */

import { createHash } from "node:crypto";
import { MemorydClient, resolveConnection, textOf, withoutInjected, type Caller } from "@memoryd/client";
import { tool, type Hooks, type Plugin, type PluginModule } from "@opencode-ai/plugin";

const SOURCE = "opencode";
const NUDGE =
  "The user asked to remember something without saying what. Call memory_store with it as one self-contained statement.";
const RECALL_LIMIT = 10;
const COMPACTION_LIMIT = 20;

export function containerTags(directory: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const hash = (s: string) => createHash("sha256").update(s).digest("hex").slice(0, 16);
  const who = env.GIT_AUTHOR_EMAIL || env.USER || "unknown";
  return [`omem_user_${hash(who)}`, `omem_project_${hash(directory)}`];
}

interface SessionState {
  agent: string;
  firstMessage?: string;
  injected: boolean;
  nudge: boolean;
  /** the user's message of the turn in progress, captured with the answer */
  pending?: string;
}

export const MemorydPlugin: Plugin = async (input, options = {}) => {
  const connection = resolveConnection(options);
  const client = new MemorydClient({
    ...connection,
    name: "memoryd",
    logger: { warn: (m) => console.warn(m), info: (m) => console.info(m) },
  });
  const tags = containerTags(input.directory);
  const [, projectTag] = tags;
  const sessions = new Map<string, SessionState>();
  const session = (id: string): SessionState => {
    let state = sessions.get(id);
    if (!state) sessions.set(id, (state = { agent: "build", injected: false, nudge: false }));
    return state;
  };
  const caller = (id: string): Caller => ({ agentId: `opencode:${session(id).agent}`, sessionId: id });

  /** memoryd's recall block: memories for `query` (the newest without one) and the profile. */
  async function recall(sessionID: string, query: string | undefined, limit: number): Promise<string> {
    const answer = await client.attempt<{ text: string }>("recall", "GET", "/v1/recall", undefined, caller(sessionID), {
      q: query,
      limit,
      exclude_session: sessionID,
    });
    return answer?.text ?? "";
  }

  async function capture(sessionID: string, messages: { role: string; content: string }[], extra: string[]) {
    if (!messages.length) return;
    await client.attempt("capture", "POST", "/v1/memories", {
      messages,
      mode: "smart",
      session_id: sessionID,
      agent_id: caller(sessionID).agentId,
      tags: [...tags, SOURCE, ...extra],
      source: SOURCE,
    }, caller(sessionID));
  }

  const hooks: Hooks = {
    "chat.message": async (info, output) => {
      const state = session(info.sessionID);
      if (info.agent) state.agent = info.agent;
      const text = withoutInjected(textOf(output.parts));
      if (!text) return;
      state.firstMessage ??= text;
      state.pending = text;
      const kept = await client.attempt<{ memories: unknown[]; bare: boolean }>(
        "remember",
        "POST",
        "/v1/remember",
        { text, tags: [...tags, "remembered", SOURCE], source: SOURCE, session_id: info.sessionID },
        caller(info.sessionID),
      );
      if (kept?.bare) state.nudge = true;
    },

    "experimental.chat.system.transform": async (info, output) => {
      if (!info.sessionID) return;
      const state = session(info.sessionID);
      if (!state.injected) {
        state.injected = true;
        const block = await recall(info.sessionID, state.firstMessage, RECALL_LIMIT);
        if (block) output.system.push(block);
      }
      if (state.nudge) {
        state.nudge = false;
        output.system.push(NUDGE);
      }
    },

    "experimental.text.complete": async (info, output) => {
      const state = session(info.sessionID);
      const answer = withoutInjected(output.text);
      const turn = [
        ...(state.pending ? [{ role: "user", content: state.pending }] : []),
        ...(answer ? [{ role: "assistant", content: answer }] : []),
      ];
      state.pending = undefined;
      await capture(info.sessionID, turn, ["auto-captured"]);
    },

    "experimental.session.compacting": async (info, output) => {
      const state = session(info.sessionID);
      if (state.pending) {
        await capture(info.sessionID, [{ role: "user", content: state.pending }], ["pre-compact"]);
        state.pending = undefined;
      }
      const block = await recall(info.sessionID, undefined, COMPACTION_LIMIT);
      if (block) output.context.push(block);
    },

    tool: {
      memory_search: tool({
        description: "Search the user's long-term memory (all earlier sessions) for facts, preferences and decisions.",
        args: {
          query: tool.schema.string().describe("what to look for"),
          limit: tool.schema.number().int().min(1).max(50).optional(),
          project_only: tool.schema.boolean().optional().describe("only memories of this project"),
        },
        async execute(args, ctx) {
          return reply(() =>
            client.request("GET", "/v1/memories/search", undefined, caller(ctx.sessionID), {
              q: args.query,
              limit: args.limit ?? 10,
              filter_tags: args.project_only ? projectTag : undefined,
            }),
          );
        },
      }),
      memory_store: tool({
        description: "Store a fact, preference or decision in long-term memory, for later sessions.",
        args: {
          content: tool.schema.string().describe("one self-contained statement"),
          tags: tool.schema.array(tool.schema.string()).optional(),
        },
        async execute(args, ctx) {
          return reply(() =>
            client.request("POST", "/v1/memories", {
              content: args.content,
              tags: [...tags, SOURCE, ...(args.tags ?? [])],
              source: SOURCE,
              session_id: ctx.sessionID,
            }, caller(ctx.sessionID)),
          );
        },
      }),
      memory_get: tool({
        description: "Fetch one memory by id, verbatim.",
        args: { id: tool.schema.string() },
        async execute(args, ctx) {
          return reply(() => client.request("GET", `/v1/memories/${encodeURIComponent(args.id)}`, undefined, caller(ctx.sessionID)));
        },
      }),
      memory_forget: tool({
        description: "Delete a memory by id (it was wrong or the user asked to forget it).",
        args: { id: tool.schema.string() },
        async execute(args, ctx) {
          return reply(() => client.request("DELETE", `/v1/memories/${encodeURIComponent(args.id)}`, undefined, caller(ctx.sessionID)));
        },
      }),
    },
  };
  return hooks;
};

/** A tool's answer: `{ok, data}` or `{ok: false, error}`, never an exception in the host. */
async function reply(call: () => Promise<unknown>): Promise<string> {
  try {
    return JSON.stringify({ ok: true, data: await call() });
  } catch (error) {
    return JSON.stringify({ ok: false, error: error instanceof Error ? error.message : String(error) });
  }
}

const plugin: PluginModule = { id: "memoryd", server: MemorydPlugin };
export default plugin;
