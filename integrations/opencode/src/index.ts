/**
 * memoryd for OpenCode (`@opencode-ai/plugin`): every request the agent sends
 * carries what memoryd recalls for the user's message it answers, every turn
 * is captured, "remember that …" becomes a pinned memory, the conversation is
 * saved before OpenCode compacts it, and the agent gets memory tools. All of
 * it is delegated to a memoryd server; see docs/opencode.md.
 *
 * Where recall goes. OpenCode calls `experimental.chat.system.transform` for
 * every model call, its own title and compaction calls too, with nothing but
 * the session and the model: a plugin cannot tell the agent's call from the
 * title generator's there, and OpenCode makes the title call first. Only the
 * agent's loop calls `experimental.chat.messages.transform` (input `{}`, the
 * session's messages to send) right before each of its requests; compaction
 * calls it too, right after `experimental.session.compacting`, on a copy of
 * the history it summarises. So the block goes in there: a part of the user's
 * message the request answers, set on a copy of that message (never stored,
 * never seen by the title call, which reads its own copy of the history),
 * fetched once per user message and given to each request of its turn.
 *
 * Memories written here carry two container tags (seed 000 §3.2): the user's
 * and the project's (hashes of the git author e-mail or user name, and of the
 * project directory), so `memory_search` can keep to the project.
 */

import { createHash } from "node:crypto";
import { MemorydClient, resolveConnection, textOf, withoutInjected, type Caller } from "@memoryd/client";
import { tool, type Hooks, type Plugin, type PluginModule } from "@opencode-ai/plugin";
import type { Message, Part, TextPart } from "@opencode-ai/sdk";

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

/** The id of the part the plugin adds to a user message (never stored: OpenCode reloads them). */
export function contextPartID(messageID: string): string {
  return `prt_memoryd_${messageID}`;
}

interface SessionState {
  agent: string;
  /** the user's message of the turn in progress, captured with the answer */
  pending?: string;
  /** user messages whose "remember …" said nothing to remember */
  bare: Set<string>;
  /** what the requests answering one user message carry: fetched once, for its id */
  context?: { messageID: string; text: Promise<string> };
  /** the next messages transform is compaction's, on the history it summarises */
  compacting: boolean;
}

type Entry = { info: Message; parts: Part[] };

/** What the user wrote in a message: its own text parts, not the ones OpenCode or a plugin added. */
function typed(parts: Part[]): string {
  const own = parts.filter((p): p is TextPart => p.type === "text" && !p.synthetic && !p.ignored);
  return withoutInjected(textOf(own));
}

function budget(value: unknown): number | undefined {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

export const MemorydPlugin: Plugin = async (input, options = {}) => {
  const connection = resolveConnection(options);
  const client = new MemorydClient({
    ...connection,
    name: "memoryd",
    logger: { warn: (m) => console.warn(m), info: (m) => console.info(m) },
  });
  const budgetTokens = budget(options.budgetTokens);
  const tags = containerTags(input.directory);
  const [, projectTag] = tags;
  const sessions = new Map<string, SessionState>();
  const session = (id: string): SessionState => {
    let state = sessions.get(id);
    if (!state) sessions.set(id, (state = { agent: "build", bare: new Set(), compacting: false }));
    return state;
  };
  const caller = (id: string): Caller => ({ agentId: `opencode:${session(id).agent}`, sessionId: id });

  /** memoryd's recall block: memories for `query` (the newest without one) and the profile. */
  async function recall(sessionID: string, query: string | undefined, limit: number): Promise<string> {
    const answer = await client.attempt<{ text: string }>("recall", "GET", "/v1/recall", undefined, caller(sessionID), {
      q: query,
      limit,
      budget_tokens: budgetTokens,
      exclude_session: sessionID,
    });
    return answer?.text ?? "";
  }

  /** What the agent's requests answering `user` carry: the recall block, and the nudge after a bare "remember". */
  function contextFor(state: SessionState, user: Entry): Promise<string> {
    if (state.context?.messageID !== user.info.id) {
      const ask = async () => {
        const block = await recall(user.info.sessionID, typed(user.parts) || undefined, RECALL_LIMIT);
        return [block, state.bare.has(user.info.id) ? NUDGE : ""].filter(Boolean).join("\n\n");
      };
      state.context = { messageID: user.info.id, text: ask() };
    }
    return state.context.text;
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
      const text = typed(output.parts);
      if (!text) return;
      state.pending = text;
      const kept = await client.attempt<{ memories: unknown[]; bare: boolean }>(
        "remember",
        "POST",
        "/v1/remember",
        { text, tags: [...tags, "remembered", SOURCE], source: SOURCE, session_id: info.sessionID },
        caller(info.sessionID),
      );
      if (kept?.bare) state.bare.add(output.message.id);
    },

    "experimental.chat.messages.transform": async (_info, output) => {
      const messages = output.messages;
      let last = messages.length - 1;
      while (last >= 0 && messages[last].info.role !== "user") last--;
      if (last < 0) return;
      const user = messages[last];
      const state = session(user.info.sessionID);
      if (state.compacting) {
        state.compacting = false; // compaction's copy of the history: it gets its context there
        return;
      }
      if (user.info.role === "user" && user.info.agent) state.agent = user.info.agent;
      const text = await contextFor(state, user);
      if (!text) return;
      const part: TextPart = {
        id: contextPartID(user.info.id),
        sessionID: user.info.sessionID,
        messageID: user.info.id,
        type: "text",
        text,
        synthetic: true,
      };
      // a new entry, not the stored one changed: the title call's copy of the history keeps the old
      messages[last] = { info: user.info, parts: [part, ...user.parts.filter((p) => p.id !== part.id)] };
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
      state.compacting = true; // OpenCode transforms the history it compacts next
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
