/**
 * memoryd as OpenClaw's context engine: every step is a call to memoryd's
 * context routes (docs/context.md), the conversation being the host's session.
 *
 * memoryd owns compaction (a summary DAG that never loses a message) and
 * assembles each prompt within the budget from the fresh tail, the summaries
 * and 4-layer recall. When memoryd cannot answer, the engine hands the host
 * its own messages back unchanged: the turn goes on without memory.
 */

import { existsSync, readFileSync } from "node:fs";
import { MemorydError, type MemorydClient } from "@memoryd/client";
import type { OpenClawPluginApi } from "openclaw/plugin-sdk/plugin-entry";
import { agentFor, type Settings } from "./config.js";
import type { Conversations } from "./conversation.js";
import { messageId, noteMessage, toMemoryd, type HostMessage } from "./messages.js";

type Factory = Parameters<OpenClawPluginApi["registerContextEngine"]>[1];
export type ContextEngine = Awaited<ReturnType<Factory>>;
type AssembleParams = Parameters<ContextEngine["assemble"]>[0];
type AssembleResult = Awaited<ReturnType<ContextEngine["assemble"]>>;
type AgentMessage = AssembleParams["messages"][number];

export const ENGINE_ID = "memoryd";
const DEFAULT_BUDGET = 8000;

interface Assembled {
  messages: (MemorydMessageOut & { summary_id?: string })[];
  system_addition: string;
  estimated_tokens: number;
}
interface MemorydMessageOut {
  id?: string;
  role: string;
  content: string;
}
interface TurnReport {
  compacted: boolean;
  summaries: unknown[];
  tokens_before: number;
  tokens_after: number;
  error: string | null;
}

export function conversationPath(sessionId: string, step: string): string {
  return `/v1/context/${encodeURIComponent(sessionId)}/${step}`;
}

export function createEngine(
  client: MemorydClient,
  settings: Settings,
  conversations: Conversations,
  logger: OpenClawPluginApi["logger"],
): ContextEngine {
  /** The budget memoryd assembled each session to last: after a turn it compacts to it. */
  const budgets = new Map<string, number>();
  /** The memoryd agent of each session, read off its key (`agent:<id>:…`). */
  const agents = new Map<string, string>();

  const learn = (sessionId: string, sessionKey?: string) => {
    if (sessionKey || !agents.has(sessionId)) agents.set(sessionId, agentFor(settings, agentOfKey(sessionKey)));
  };
  const caller = (sessionId: string) => ({ agentId: agents.get(sessionId), sessionId: conversations.id(sessionId) });
  const path = (sessionId: string, step: string) => conversationPath(conversations.id(sessionId), step);
  const budgetFor = (sessionId: string, given?: number) =>
    settings.budgetTokens ?? given ?? budgets.get(sessionId) ?? DEFAULT_BUDGET;

  async function ingestBatch(sessionId: string, messages: AgentMessage[]): Promise<number> {
    const batch = (messages as unknown as HostMessage[]).map(toMemoryd).filter((m) => m !== undefined);
    if (!batch.length) return 0;
    const agent = agents.get(sessionId);
    const stored = await client.attempt<{ stored: number }>(
      "ingest",
      "POST",
      path(sessionId, "ingest-batch"),
      { messages: batch, ...(agent ? { agent_id: agent } : {}) },
      caller(sessionId),
    );
    return stored?.stored ?? 0;
  }

  async function afterTurn(sessionId: string, budget?: number): Promise<void> {
    const report = await client.attempt<TurnReport>(
      "compaction",
      "POST",
      path(sessionId, "after-turn"),
      { budget_tokens: budgetFor(sessionId, budget) },
      caller(sessionId),
    );
    if (report?.error) logger.warn(`memoryd: compaction deferred: ${report.error}`);
    else if (report?.compacted)
      logger.debug?.(`memoryd: compacted ${sessionId}: ${report.tokens_before} -> ${report.tokens_after} tokens`);
  }

  return {
    info: {
      id: ENGINE_ID,
      name: "memoryd",
      ownsCompaction: true,
      // ingest is idempotent by message id, so a retried turn commits once
      transcriptSemantics: {
        currentTurnFence: "before-current-turn-entry-v1",
        turnAdvancementIdempotency: "atomic-idempotent-v1",
      },
    },

    async bootstrap({ sessionId, sessionKey, sessionFile }) {
      learn(sessionId, sessionKey);
      if (!sessionFile || !existsSync(sessionFile)) {
        return { bootstrapped: false, reason: "no session transcript file to import" };
      }
      const answer = await client.attempt<{ stored: number }>(
        "bootstrap",
        "POST",
        path(sessionId, "bootstrap"),
        { transcript: readFileSync(sessionFile, "utf8"), format: "openclaw" },
        caller(sessionId),
      );
      return answer
        ? { bootstrapped: true, importedMessages: answer.stored }
        : { bootstrapped: false, reason: "memoryd unreachable" };
    },

    // the host's heartbeat poll is not a turn of the conversation: it is never stored
    async ingest({ sessionId, sessionKey, message, isHeartbeat }) {
      learn(sessionId, sessionKey);
      if (isHeartbeat) return { ingested: false };
      return { ingested: (await ingestBatch(sessionId, [message])) > 0 };
    },

    async ingestBatch({ sessionId, sessionKey, messages, isHeartbeat }) {
      learn(sessionId, sessionKey);
      if (isHeartbeat) return { ingestedCount: 0 };
      return { ingestedCount: await ingestBatch(sessionId, messages) };
    },

    async commitTurn({ sessionId, sessionKey, messages, isHeartbeat }) {
      learn(sessionId, sessionKey);
      if (isHeartbeat) return { status: "committed" };
      await ingestBatch(sessionId, messages);
      await afterTurn(sessionId);
      return { status: "committed" };
    },

    async afterTurn({ sessionId, sessionKey, messages, prePromptMessageCount, tokenBudget, isHeartbeat }) {
      learn(sessionId, sessionKey);
      if (isHeartbeat) return;
      await ingestBatch(sessionId, messages.slice(prePromptMessageCount));
      await afterTurn(sessionId, tokenBudget);
    },

    async assemble(params: AssembleParams): Promise<AssembleResult> {
      const { sessionId, messages, prompt } = params;
      learn(sessionId, params.sessionKey);
      const budget = budgetFor(sessionId, params.tokenBudget);
      budgets.set(sessionId, budget);
      const own: AssembleResult = { messages, estimatedTokens: 0 };
      let assembled: Assembled;
      try {
        assembled = await client.request<Assembled>(
          "POST",
          path(sessionId, "assemble"),
          { budget_tokens: budget, ...(prompt ? { query: prompt } : {}) },
          caller(sessionId),
        );
      } catch (error) {
        // a budget too small for memoryd's fresh tail: the host's own messages, as they are
        if (error instanceof MemorydError && error.code === "validation_error") {
          logger.debug?.(`memoryd: assemble for ${sessionId}: ${error.message}`);
        } else client.warn("assemble", error);
        return own;
      }
      const byId = new Map((messages as unknown as HostMessage[]).map((m) => [messageId(m), m]));
      const out: AgentMessage[] = [];
      const system: string[] = [];
      // memoryd holds none of the host's messages (a conversation not ingested yet,
      // the first prompt above all): they go as they are, with what memoryd recalled
      const holds = assembled.messages.some((m) => m.summary_id || (m.id && byId.has(m.id)));
      if (!holds) out.push(...messages);
      for (const m of assembled.messages) {
        const host = m.id ? byId.get(m.id) : undefined;
        if (host) out.push(host as unknown as AgentMessage);
        else if (!holds && m.role !== "system") continue;
        else if (m.role === "system" && !m.summary_id) system.push(m.content);
        else out.push(noteMessage(m.summary_id ? m.content : `[${m.role}] ${m.content}`) as unknown as AgentMessage);
      }
      if (assembled.system_addition) system.push(assembled.system_addition);
      return {
        messages: out,
        estimatedTokens: assembled.estimated_tokens,
        ...(system.length ? { systemPromptAddition: system.join("\n\n") } : {}),
      };
    },

    async compact({ sessionId, sessionKey }) {
      learn(sessionId, sessionKey);
      try {
        const report = await client.request<TurnReport>("POST", path(sessionId, "compact"), {}, caller(sessionId));
        return {
          ok: report.error === null,
          compacted: report.compacted,
          ...(report.error ? { reason: report.error } : {}),
          result: { tokensBefore: report.tokens_before, tokensAfter: report.tokens_after },
        };
      } catch (error) {
        client.warn("compact", error);
        return { ok: false, compacted: false, reason: "memoryd unreachable" };
      }
    },
  };
}

/** The OpenClaw agent of a session key (`agent:<agentId>:<rest>`). */
export function agentOfKey(sessionKey: string | undefined): string | undefined {
  const parts = sessionKey?.split(":") ?? [];
  return parts[0] === "agent" && parts[1] ? parts[1] : undefined;
}
