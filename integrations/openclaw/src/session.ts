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
import { type Conversations, processWide } from "./conversation.js";
import { checkpointEvents, type HostMessage, messageText } from "./messages.js";

type Trigger = "agent_end" | "tool" | "reset" | "shutdown";

interface SessionState {
  agentId: string;
  sessionId: string;
  project: string;
  /**
   * the messages already saved, by role and text: the host hands each run's own
   * messages to `agent_end` and the whole transcript, with its reset marker, to
   * `before_reset`, so a position in one list says nothing about the other
   */
  saved: Set<string>;
  /** tool calls seen since the last save */
  tools: Record<string, unknown>[];
  chain: Promise<void>;
}

const WRITES = /(^|_)(write|edit|patch|apply_patch|create|delete|move|rename)($|_)/i;
/** Runs the host starts on its own (its heartbeat poll, a memory flush): no user said them. */
const HOST_RUNS = new Set(["heartbeat", "memory"]);

type HookContext = { sessionId?: string; sessionKey?: string; agentId?: string; workspaceDir?: string; trigger?: string };

export class Sessions {
  /** shared by every registration of the plugin in the gateway process */
  readonly #states = processWide("sessions", () => new Map<string, SessionState>());

  /**
   * @param engineRecalls memoryd is the context engine too: the engine's assembly
   * recalls for every prompt, the first included, so a restore brings the checkpoint only
   */
  constructor(
    private readonly client: MemorydClient,
    private readonly settings: Settings,
    private readonly conversations: Conversations,
    private readonly engineRecalls = false,
  ) {}

  #state(ctx: HookContext): SessionState | undefined {
    if (!ctx.sessionId || HOST_RUNS.has(ctx.trigger ?? "")) return undefined;
    const sessionId = this.conversations.id(ctx.sessionId);
    let state = this.#states.get(sessionId);
    if (!state) {
      state = {
        agentId: agentFor(this.settings, ctx.agentId),
        sessionId,
        project: ctx.workspaceDir ?? "",
        saved: new Set(),
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
   * nothing): the last checkpoint of its agent in its project, then, when
   * memoryd is not the context engine, the memories recalled for its first
   * prompt (the engine's assembly recalls for every prompt itself).
   */
  async restore(ctx: HookContext, history: unknown[], prompt: string): Promise<string> {
    const state = this.#state(ctx);
    if (!state || history.some((m) => (m as HostMessage)?.role === "user")) return "";
    const who = { agentId: state.agentId, sessionId: state.sessionId };
    const [restored, recalled] = await Promise.all([
      this.client.attempt<{ text: string }>("checkpoint restore", "GET", "/v1/checkpoints/restore", undefined, who, {
        agent_id: state.agentId,
        project: state.project,
        max_chars: this.settings.maxPrependChars,
      }),
      this.engineRecalls
        ? undefined
        : this.client.attempt<{ text: string }>("recall", "GET", "/v1/recall", undefined, who, {
            q: prompt,
            exclude_session: state.sessionId,
          }),
    ]);
    return [restored?.text, recalled?.text].filter(Boolean).join("\n\n");
  }

  trackTool(ctx: HookContext, call: { toolName: string; params: Record<string, unknown>; toolCallId?: string; error?: string }): boolean {
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
    ctx: HookContext,
    messages: unknown[] | undefined,
    trigger: Trigger,
  ): Promise<void> {
    const state = this.#state(ctx);
    return state ? this.#enqueue(state, messages, trigger) : Promise.resolve();
  }

  #enqueue(state: SessionState, messages: unknown[] | undefined, trigger: Trigger): Promise<void> {
    const list = (messages ?? []) as HostMessage[];
    const next = state.chain.then(async () => {
      const fresh = list.filter((m) => !state.saved.has(savedKey(m)));
      const events = [...checkpointEvents(fresh, this.settings.maxMsgChars), ...state.tools];
      // a reset is saved even with nothing new: the checkpoint says how the session ended
      if (!events.length && trigger !== "reset") return;
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
        for (const m of fresh) state.saved.add(savedKey(m));
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

/** A message as the checkpoint saw it: its role and its text, whichever list it came in. */
function savedKey(message: HostMessage): string {
  return `${String(message.role)}\u0000${messageText(message)}`;
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
