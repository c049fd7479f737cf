/**
 * Drives the memoryd OpenCode plugin through a scripted session, the way
 * OpenCode calls a plugin: the module's `server(input, options)` is awaited
 * for its hooks, then for each user turn `chat.message`, the system prompt's
 * `experimental.chat.system.transform`, and `experimental.text.complete` with
 * the model's answer; `experimental.session.compacting` when the script asks.
 * Every value is typed by `@opencode-ai/plugin` and `@opencode-ai/sdk` (the
 * host's own packages), so a change of the plugin contract fails the build.
 *
 * Input (stdin, JSON): {options, directory, steps: [{session, user?, answer?, compact?}]}.
 * Output (stdout, JSON): what each step left in the system prompt or compaction context,
 * and the tool answers.
 */

import { readFileSync } from "node:fs";
import { createOpencodeClient, type Model, type Project, type TextPart, type UserMessage } from "@opencode-ai/sdk";
import type { Hooks, PluginInput, PluginModule, ToolContext } from "@opencode-ai/plugin";
import plugin from "@memoryd/opencode";

interface Step {
  session: string;
  user?: string;
  answer?: string;
  compact?: boolean;
  tool?: { name: string; args: Record<string, unknown> };
}

const script = JSON.parse(readFileSync(0, "utf8")) as {
  options: Record<string, unknown>;
  directory: string;
  steps: Step[];
};

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

const hooks: Hooks = await module.server(input, script.options);
const out: Record<string, unknown>[] = [];
let n = 0;
for (const step of script.steps) {
  const record: Record<string, unknown> = { session: step.session };
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
    const system = { system: ["You are opencode, an interactive CLI tool."] };
    await hooks["experimental.chat.system.transform"]?.({ sessionID: step.session, model }, system);
    record.system = system.system;
  }
  if (step.answer !== undefined) {
    const text = { text: step.answer };
    await hooks["experimental.text.complete"]?.({ sessionID: step.session, messageID: `msg_${n}`, partID: `prt_a${n}` }, text);
  }
  if (step.compact) {
    const compaction = { context: [] as string[] };
    await hooks["experimental.session.compacting"]?.({ sessionID: step.session }, compaction);
    record.context = compaction.context;
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
