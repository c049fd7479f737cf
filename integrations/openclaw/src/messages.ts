/**
 * OpenClaw's agent messages as memoryd reads them, and back.
 *
 * A message gets a stable id from its role, time and text, so the same
 * message ingested twice (a retried turn, a replayed batch) is stored once and
 * the history memoryd assembles maps back onto the host's own message objects.
 */

import { createHash } from "node:crypto";
import { textOf, withoutInjected } from "@memoryd/client";

export type HostMessage = Record<string, unknown> & { role?: unknown; content?: unknown };

export interface MemorydMessage {
  id: string;
  role: string;
  content: string;
  created_at?: string;
  tool_calls?: unknown[];
}

interface ToolCallPart {
  type: "toolCall";
  id?: string;
  name?: string;
  arguments?: Record<string, unknown>;
}

function toolCalls(message: HostMessage): ToolCallPart[] {
  const content = message.content;
  if (!Array.isArray(content)) return [];
  return content.filter(
    (p): p is ToolCallPart => !!p && typeof p === "object" && (p as { type?: unknown }).type === "toolCall",
  );
}

function roleOf(message: HostMessage): string {
  const role = typeof message.role === "string" ? message.role : "user";
  return role === "toolResult" ? "tool" : role;
}

export function messageText(message: HostMessage): string {
  return withoutInjected(textOf(message.content));
}

function when(message: HostMessage): string | undefined {
  const t = Number(message.timestamp);
  return Number.isFinite(t) && t > 0 ? new Date(t).toISOString() : undefined;
}

export function messageId(message: HostMessage): string {
  const digest = createHash("sha256")
    .update(`${roleOf(message)}\u0000${String(message.timestamp ?? "")}\u0000${textOf(message.content)}`)
    .digest("hex");
  return `oc-${digest.slice(0, 24)}`;
}

export function toMemoryd(message: HostMessage): MemorydMessage | undefined {
  const role = roleOf(message);
  let content = messageText(message);
  if (role === "tool") {
    const name = typeof message.toolName === "string" ? message.toolName : "tool";
    content = `[${name}${message.isError ? " failed" : ""}] ${content}`;
  }
  const calls = toolCalls(message).map((c) => ({ id: c.id, name: c.name, arguments: c.arguments ?? {} }));
  if (!content && !calls.length) return undefined;
  const out: MemorydMessage = { id: messageId(message), role, content: content || "(tool call)" };
  const at = when(message);
  if (at) out.created_at = at;
  if (calls.length) out.tool_calls = calls;
  return out;
}

/** Checkpoint events (seed 004's mechanical track): messages cut to `maxChars`, tool calls. */
export function checkpointEvents(messages: HostMessage[], maxChars: number): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [];
  for (const message of messages) {
    if (message.role === "user" || message.role === "assistant") {
      const text = messageText(message);
      if (text) events.push({ role: message.role, content: text.slice(0, maxChars) });
      for (const call of toolCalls(message)) {
        if (call.name) events.push({ tool: call.name, arguments: call.arguments ?? {}, id: call.id });
      }
    } else if (message.role === "toolResult" && typeof message.toolCallId === "string") {
      events.push({ result_of: message.toolCallId, success: !message.isError });
    }
  }
  return events;
}

/** A memoryd summary or recall section as a message the host can send (user role, text). */
export function noteMessage(text: string): HostMessage {
  return { role: "user", content: [{ type: "text", text }], timestamp: Date.now() };
}
