/**
 * memoryd for OpenClaw: one plugin that makes a memoryd server the agents'
 * context engine (slot `contextEngine`), their memory (slot `memory`, with the
 * tools), and the keeper of their sessions across `/new` (checkpoints).
 * Everything is delegated to memoryd over REST; see docs/openclaw.md.
 */

import { MemorydClient } from "@memoryd/client";
import type { OpenClawPluginApi, OpenClawPluginDefinition } from "openclaw/plugin-sdk/plugin-entry";
import { readSettings } from "./config.js";
import { Conversations, processWide } from "./conversation.js";
import { createEngine, ENGINE_ID } from "./engine.js";
import { registerHooks, Sessions } from "./session.js";
import { memoryTools } from "./tools.js";

const GUIDANCE = [
  "## Memory (memoryd)",
  "Long-term memory persists across sessions. Use memory_search before answering questions about the user's preferences, past decisions or earlier work; memory_store to keep a new durable fact; memory_get for a memory's full text.",
  "Earlier parts of this session may be compacted into <memoryd-summary> blocks: lcm_grep finds an exact detail in them, lcm_expand_query restores the original messages.",
];

const plugin: OpenClawPluginDefinition = {
  id: "memoryd",
  name: "memoryd",
  description: "Long-term memory, the context engine and session continuity from a memoryd server.",
  register(api: OpenClawPluginApi) {
    const settings = readSettings(api.pluginConfig);
    const client = new MemorydClient({
      url: settings.url,
      apiKey: settings.apiKey,
      timeoutMs: settings.timeoutMs,
      name: "memoryd",
      logger: api.logger,
    });
    const conversations = processWide("conversations", () => new Conversations());
    api.registerContextEngine(ENGINE_ID, () => createEngine(client, settings, conversations, api.logger));
    api.registerMemoryCapability({
      promptBuilder: ({ availableTools }) =>
        availableTools.has("memory_search") ? GUIDANCE : [],
    });
    api.registerTool((ctx) => memoryTools(client, settings, conversations, ctx), {
      names: ["memory_search", "memory_get", "memory_store", "lcm_grep", "lcm_expand_query"],
    });
    const engineRecalls = api.config?.plugins?.slots?.contextEngine === ENGINE_ID;
    registerHooks(api, new Sessions(client, settings, conversations, engineRecalls));
  },
};

export default plugin;
