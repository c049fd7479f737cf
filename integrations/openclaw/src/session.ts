/**
 * Session continuity (seed 004) over memoryd's checkpoints: a new session
 * starts with the last checkpoint of its agent in its project, and a session
 * leaves one behind after every run, after a tool call that wrote a file,
 * before `/new` or `/reset`, and when the gateway stops.
 *
 * Only what a session said since its last save is sent (memoryd folds it into
 * the checkpoint and keeps it as the session's raw layer); every save of a
 * session waits for the one before it, so they arrive in order.
 */

import type { MemorydClient } from "@memoryd/client";
import type { OpenClawPluginApi } from "openclaw/plugin-sdk/plugin-entry";
import { agentFor, type Settings } from "./config.js";
import type { Conversations } from "./conversation.js";
import { checkpointEvents, type HostMessage } from "./messages.js";

type Trigger = "agent_end" | "tool" | "reset" | "shutdown";

interface SessionState {
  agentId: string;
  sessionId: string;
  project: string;
  /** host messages already saved, by position in the session's list */
  saved: number;
  /** tool calls seen since the last save */
  tools: Record<string, unknown>[];
  chain: Promise<void>;
}

const WRITES = /(^|_)(write|edit|patch|apply_patch|create|delete|move|rename)($|_)/i;

export class Sessions {
  readonly #states = new Map<string, SessionState>();

  constructor(
    private readonly client: MemorydClient,
    private readonly settings: Settings,
    private readonly conversations: Conversations,
  ) {}

  #state(ctx: { sessionId?: string; sessionKey?: string; agentId?: string; workspaceDir?: string }): SessionState | undefined {
    if (!ctx.sessionId) return undefined;
    const sessionId = this.conversations.id(ctx.sessionId);
    let state = this.#states.get(sessionId);
    if (!state) {
      state = {
        agentId: agentFor(this.settings, ctx.agentId),
        sessionId,
        project: ctx.workspaceDir ?? "",
        saved: 0,
        tools: [],
        chain: Promise.resolve(),
      };
      this.#states.set(sessionId, state);
    }
    if (ctx.workspaceDir) state.project = ctx.workspaceDir;
    return state;
  }

  /**
   * What a session with no history yet starts with ("" when memoryd knows
   * nothing): the last checkpoint of its agent in its project, then the
   * memories recalled for its first prompt (from the next turn on, the
   * context engine's assembly recalls).
   */
  async restore(ctx: Parameters<Sessions["save"]>[0], history: unknown[], prompt: string): Promise<string> {
    const state = this.#state(ctx);
    if (!state || history.some((m) => (m as HostMessage)?.role === "user")) return "";
    const who = { agentId: state.agentId, sessionId: state.sessionId };
    const [restored, recalled] = await Promise.all([
      this.client.attempt<{ text: string }>("checkpoint restore", "GET", "/v1/checkpoints/restore", undefined, who, {
        agent_id: state.agentId,
        project: state.project,
        max_chars: this.settings.maxPrependChars,
      }),
      this.client.attempt<{ text: string }>("recall", "GET", "/v1/recall", undefined, who, {
        q: prompt,
        exclude_session: state.sessionId,
      }),
    ]);
    return [restored?.text, recalled?.text].filter(Boolean).join("\n\n");
  }

  trackTool(ctx: { sessionId?: string; agentId?: string }, call: { toolName: string; params: Record<string, unknown>; toolCallId?: string; error?: string }): boolean {
    const state = this.#state(ctx);
    if (!state) return false;
    state.tools.push({
      tool: call.toolName,
      arguments: call.params ?? {},
      success: call.error === undefined,
      ...(call.toolCallId ? { id: call.toolCallId } : {}),
    });
    return WRITES.test(call.toolName);
  }

  /** Save what is new in the session (the messages after the last save, the tools since). */
  save(
    ctx: { sessionId?: string; sessionKey?: string; agentId?: string; workspaceDir?: string },
    messages: unknown[] | undefined,
    trigger: Trigger,
  ): Promise<void> {
    const state = this.#state(ctx);
    return state ? this.#enqueue(state, messages, trigger) : Promise.resolve();
  }

  #enqueue(state: SessionState, messages: unknown[] | undefined, trigger: Trigger): Promise<void> {
    const list = (messages ?? []) as HostMessage[];
    const next = state.chain.then(async () => {
      const fresh = list.length >= state.saved ? list.slice(state.saved) : list;
      const events = [...checkpointEvents(fresh, this.settings.maxMsgChars), ...state.tools];
      if (!events.length) return;
      const saved = await this.client.attempt(
        `checkpoint (${trigger})`,
        "POST",
        "/v1/checkpoints",
        {
          agent_id: state.agentId,
          session_id: state.sessionId,
          project: state.project,
          trigger,
          events,
          summarize: false,
          limits: {
            max_msg_chars: this.settings.maxMsgChars,
            max_recent_msgs: this.settings.maxRecentMsgs,
            max_recent_tools: this.settings.maxRecentTools,
            max_modified_files: this.settings.maxModifiedFiles,
          },
        },
        { agentId: state.agentId, sessionId: state.sessionId },
      );
      if (saved !== undefined) {
        if (messages) state.saved = list.length;
        state.tools = [];
      }
    });
    state.chain = next;
    return next;
  }

  /** Gateway stop: every session's pending save, then what its tools did since. */
  async flush(): Promise<void> {
    await Promise.allSettled(
      [...this.#states.values()].map((s) => this.#enqueue(s, undefined, "shutdown")),
    );
  }

  /** `/new` or `/reset`: the session's next turns are a new conversation with a state of its own. */
  reset(sessionId: string | undefined): void {
    if (!sessionId) return;
    this.#states.delete(this.conversations.id(sessionId));
    this.conversations.reset(sessionId);
  }
}

export type HookApi = Pick<OpenClawPluginApi, "on" | "logger">;

export function registerHooks(api: HookApi, sessions: Sessions): void {
  api.on("before_prompt_build", async (event, ctx) => {
    const text = await sessions.restore(ctx, event.messages, event.currentUserMessage ?? event.prompt);
    return text ? { prependContext: text } : undefined;
  });
  api.on("agent_end", async (event, ctx) => {
    if (event.success) await sessions.save(ctx, event.messages, "agent_end");
  });
  api.on("after_tool_call", async (event, ctx) => {
    if (sessions.trackTool(ctx, event)) await sessions.save(ctx, undefined, "tool");
  });
  api.on("before_reset", async (event, ctx) => {
    const saved = sessions.save(ctx, event.messages, "reset");
    sessions.reset(ctx.sessionId);
    await saved;
  });
  api.on("gateway_stop", async () => {
    await sessions.flush();
  });
}
