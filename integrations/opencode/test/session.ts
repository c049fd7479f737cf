/**
 * Drives the memoryd OpenCode plugin through a scripted session, the way
 * OpenCode 1.18 calls a plugin: the module's `server(input, options)` is
 * awaited for its hooks, then for each user turn
 *
 * - `chat.message` with the user's message;
 * - on the session's first message, the title call: OpenCode forks it with
 *   its own copy of the history, and its `experimental.chat.system.transform`
 *   comes first (the title generator's system prompt, no tools);
 * - for each request of the agent's loop (`requests`, one unless a tool call
 *   makes more): `experimental.chat.messages.transform` on the session's
 *   messages as loaded for that request, then the request's own
 *   `experimental.chat.system.transform`;
 * - `experimental.text.complete` with the model's answer;
 *
 * and, when the script asks, compaction: `experimental.session.compacting`,
 * then `experimental.chat.messages.transform` on a copy of the history it
 * summarises, then its own system transform. Every value is typed by
 * `@opencode-ai/plugin` and `@opencode-ai/sdk` (the host's own packages), so a
 * change of the plugin contract fails the build.
 *
 * Input (stdin, JSON): {options, directory, steps: [{session, user?, requests?, answer?, compact?, tool?}]}.
 * Output (stdout, JSON), for each step: the text each agent request sent as the
 * user's message (`sent`) and its system prompt (`system`), the title call's
 * system prompt and messages (`title`), the compaction context and the history
 * compaction summarised (`context`, `compacted`), and the tool answers.
 */

import { readFileSync } from "node:fs";
import {
  createOpencodeClient,
  type AssistantMessage,
  type Message,
  type Model,
  type Part,
  type Project,
  type TextPart,
  type UserMessage,
} from "@opencode-ai/sdk";
import type { Hooks, PluginInput, PluginModule, ToolContext } from "@opencode-ai/plugin";
import plugin from "@memoryd/opencode";

interface Step {
  session: string;
  user?: string;
  /** requests the agent's loop sends for this message (a tool call makes a second one) */
  requests?: number;
  answer?: string;
  compact?: boolean;
  tool?: { name: string; args: Record<string, unknown> };
}

type Entry = { info: Message; parts: Part[] };

const script = JSON.parse(readFileSync(0, "utf8")) as {
  options: Record<string, unknown>;
  directory: string;
  steps: Step[];
};

const AGENT_SYSTEM = "You are opencode, an interactive CLI tool.";
const TITLE_SYSTEM = "You are a title generator. You output ONLY a thread title.";
const COMPACTION_SYSTEM = "Summarize the conversation.";

const module: PluginModule = plugin;
const project: Project = { id: "p1", worktree: script.directory, time: { created: Date.now() } } as Project;
const input: PluginInput = {
  client: createOpencodeClient({ baseUrl: "http://127.0.0.1:9" }),
  project,
  directory: script.directory,
  worktree: script.directory,
  experimental_workspace: { register() {} },
  serverUrl: new URL("http://127.0.0.1:9"),
  $: (() => {
    throw new Error("the memoryd plugin runs no shell command");
  }) as unknown as PluginInput["$"],
};
const model = { id: "scripted", providerID: "scripted" } as unknown as Model;

/** The text parts of the history's last user message, as a request sends them. */
function userText(messages: Entry[]): string[] {
  const user = [...messages].reverse().find((m) => m.info.role === "user");
  return (user?.parts ?? []).flatMap((p) => (p.type === "text" && !p.ignored && p.text ? [p.text] : []));
}

/** What a model call's system prompt ends as, after the plugins' transform. */
async function systemOf(sessionID: string, first: string): Promise<string[]> {
  const system = { system: [first] };
  await hooks["experimental.chat.system.transform"]?.({ sessionID, model }, system);
  return system.system;
}

const hooks: Hooks = await module.server(input, script.options);
const histories = new Map<string, Entry[]>();
const out: Record<string, unknown>[] = [];
let n = 0;
for (const step of script.steps) {
  const record: Record<string, unknown> = { session: step.session };
  const history = histories.get(step.session) ?? [];
  histories.set(step.session, history);
  if (step.user !== undefined) {
    const messageID = `msg_${++n}`;
    const message: UserMessage = {
      id: messageID,
      sessionID: step.session,
      role: "user",
      time: { created: Date.now() },
      agent: "build",
      model: { providerID: "scripted", modelID: "scripted" },
    };
    const part: TextPart = { id: `prt_${n}`, sessionID: step.session, messageID, type: "text", text: step.user };
    await hooks["chat.message"]?.({ sessionID: step.session, agent: "build", messageID }, { message, parts: [part] });
    history.push({ info: message, parts: [part] });
    if (history.filter((m) => m.info.role === "user").length === 1) {
      // the title call: its own copy of the history, its system transform before the agent's
      const titleHistory = history.slice();
      const system = await systemOf(step.session, TITLE_SYSTEM);
      record.title = { system, messages: titleHistory.flatMap((m) => userText([m])) };
    }
    const sent: string[][] = [];
    for (let i = 0; i < (step.requests ?? 1); i++) {
      if (i > 0) {
        // the previous request's answer was a tool call: the loop goes on with it in the history
        const info = {
          id: `msg_${n}_step${i}`,
          sessionID: step.session,
          role: "assistant",
          parentID: messageID,
        } as unknown as AssistantMessage;
        const call: TextPart = { id: `prt_${n}_step${i}`, sessionID: step.session, messageID: info.id, type: "text", text: "Reading the repo." };
        history.push({ info, parts: [call] });
      }
      // each request loads the session's messages afresh
      const messages: Entry[] = structuredClone(history);
      await hooks["experimental.chat.messages.transform"]?.({}, { messages });
      record.system = await systemOf(step.session, AGENT_SYSTEM);
      sent.push(userText(messages));
    }
    record.sent = sent;
  }
  if (step.answer !== undefined) {
    const text = { text: step.answer };
    await hooks["experimental.text.complete"]?.({ sessionID: step.session, messageID: `msg_${n}`, partID: `prt_a${n}` }, text);
    const info = { id: `msg_a${n}`, sessionID: step.session, role: "assistant", parentID: `msg_${n}` } as unknown as AssistantMessage;
    history.push({ info, parts: [{ id: `prt_a${n}`, sessionID: step.session, messageID: info.id, type: "text", text: text.text }] });
  }
  if (step.compact) {
    const compaction = { context: [] as string[] };
    await hooks["experimental.session.compacting"]?.({ sessionID: step.session }, compaction);
    const head: Entry[] = structuredClone(history);
    await hooks["experimental.chat.messages.transform"]?.({}, { messages: head });
    await systemOf(step.session, COMPACTION_SYSTEM);
    record.context = compaction.context;
    record.compacted = head.flatMap((m) => m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])));
  }
  if (step.tool) {
    const definition = hooks.tool?.[step.tool.name];
    if (!definition) throw new Error(`no tool ${step.tool.name}`);
    const ctx: ToolContext = {
      sessionID: step.session,
      messageID: `msg_${n}`,
      agent: "build",
      directory: script.directory,
      worktree: script.directory,
      abort: new AbortController().signal,
      metadata() {},
      async ask() {},
    };
    record.tool = await definition.execute(step.tool.args as never, ctx);
  }
  out.push(record);
}
await hooks.dispose?.();
process.stdout.write(JSON.stringify(out));
