/** The plugin's settings (`plugins.entries.memoryd.config`), seed 004's keys with their defaults. */

import { resolveConnection } from "@memoryd/client";

export interface Settings {
  url: string;
  apiKey?: string;
  timeoutMs: number;
  agentId?: string;
  budgetTokens?: number;
  maxPrependChars: number;
  maxMsgChars: number;
  maxRecentMsgs: number;
  maxRecentTools: number;
  maxModifiedFiles: number;
  logLevel: "debug" | "info" | "warn" | "error";
}

const LEVELS = ["debug", "info", "warn", "error"] as const;

function whole(value: unknown, fallback: number, least: number): number {
  const n = Number(value);
  return Number.isInteger(n) && n >= least ? n : fallback;
}

export function readSettings(raw: Record<string, unknown> | undefined): Settings {
  const config = raw ?? {};
  const budget = Number(config.budgetTokens);
  const level = LEVELS.find((l) => l === config.logLevel) ?? "info";
  return {
    ...resolveConnection(config),
    agentId: typeof config.agentId === "string" && config.agentId ? config.agentId : undefined,
    budgetTokens: Number.isInteger(budget) && budget > 0 ? budget : undefined,
    maxPrependChars: whole(config.maxPrependChars, 4000, 200),
    maxMsgChars: whole(config.maxMsgChars, 500, 50),
    maxRecentMsgs: whole(config.maxRecentMsgs, 3, 1),
    maxRecentTools: whole(config.maxRecentTools, 5, 0),
    maxModifiedFiles: whole(config.maxModifiedFiles, 20, 0),
    logLevel: level,
  };
}

/** memoryd's agent for an OpenClaw agent: one scope per agent unless `agentId` pins one. */
export function agentFor(settings: Settings, hostAgent: string | undefined): string {
  return settings.agentId ?? `openclaw:${hostAgent || "main"}`;
}
