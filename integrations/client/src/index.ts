/**
 * The memoryd REST client shared by the host plugins.
 *
 * A host must never wait on or crash because of its memory: every call has a
 * deadline, and a call that fails (memoryd stopped, a timeout, a refused key)
 * resolves to `undefined` after one warning line. The line is written once per
 * outage, not once per call, so a stopped server does not flood the host's
 * log; the first success after it says memoryd is back. The API key travels in
 * the `X-API-Key` header only and is never part of a message.
 */

export const DEFAULT_URL = "http://127.0.0.1:8080";
export const DEFAULT_TIMEOUT_MS = 5000;

export interface Logger {
  warn(message: string): void;
  info?(message: string): void;
}

export interface ClientOptions {
  url?: string;
  apiKey?: string;
  timeoutMs?: number;
  /** Prefix of every warning line, the plugin's name. */
  name: string;
  logger: Logger;
}

/** Who is calling: memoryd scopes by agent and session (`X-Agent-Id`, `X-Session-Id`). */
export interface Caller {
  agentId?: string;
  sessionId?: string;
}

export class MemorydError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Settings read the same way by every plugin: the host's config first, then the environment. */
export function resolveConnection(
  config: { apiUrl?: unknown; apiKey?: unknown; timeoutMs?: unknown },
  env: NodeJS.ProcessEnv = process.env,
): { url: string; apiKey?: string; timeoutMs: number } {
  const text = (v: unknown): string | undefined =>
    typeof v === "string" && v.trim() ? v.trim() : undefined;
  const url =
    text(config.apiUrl) ?? text(env.MEMORYD_URL) ?? text(env.OMEM_API_URL) ?? DEFAULT_URL;
  const apiKey = text(config.apiKey) ?? text(env.MEMORYD_API_KEY) ?? text(env.OMEM_API_KEY);
  const timeout = Number(config.timeoutMs ?? env.MEMORYD_TIMEOUT_MS);
  return {
    url: url.replace(/\/+$/, ""),
    apiKey,
    timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_TIMEOUT_MS,
  };
}

/**
 * Servers found unreachable, shared by every client of the process (on
 * `globalThis`: a host may load a plugin's modules more than once), so an
 * outage is one warning line.
 */
const SHARED = Symbol.for("memoryd.client.unreachable");
const unreachable: Set<string> = ((globalThis as Record<symbol, unknown>)[SHARED] ??= new Set<string>()) as Set<string>;

export class MemorydClient {
  readonly url: string;
  readonly timeoutMs: number;
  readonly #apiKey?: string;
  readonly #name: string;
  readonly #logger: Logger;

  constructor(options: ClientOptions) {
    this.url = (options.url ?? DEFAULT_URL).replace(/\/+$/, "");
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#apiKey = options.apiKey;
    this.#name = options.name;
    this.#logger = options.logger;
  }

  /** The answer's JSON, or throws MemorydError / a network error. */
  async request<T>(
    method: string,
    path: string,
    body?: unknown,
    caller: Caller = {},
    query?: Record<string, string | number | undefined>,
  ): Promise<T> {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (this.#apiKey) headers["X-API-Key"] = this.#apiKey;
    if (caller.agentId) headers["X-Agent-Id"] = caller.agentId;
    if (caller.sessionId) headers["X-Session-Id"] = caller.sessionId;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
    const qs = params.size ? `?${params}` : "";
    const response = await fetch(`${this.url}${path}${qs}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await response.text();
    const data = text ? JSON.parse(text) : {};
    if (!response.ok) {
      const error = data?.error ?? {};
      throw new MemorydError(
        response.status,
        String(error.code ?? response.status),
        String(error.message ?? response.statusText),
      );
    }
    return data as T;
  }

  /**
   * `request`, but a failure is a warning and `undefined`: what a hook or a
   * context-engine step uses, so the host goes on without its memory.
   */
  async attempt<T>(
    what: string,
    method: string,
    path: string,
    body?: unknown,
    caller: Caller = {},
    query?: Record<string, string | number | undefined>,
  ): Promise<T | undefined> {
    try {
      const answer = await this.request<T>(method, path, body, caller, query);
      if (unreachable.delete(this.url)) {
        this.#logger.info?.(`${this.#name}: memoryd at ${this.url} answers again`);
      }
      return answer;
    } catch (error) {
      this.warn(what, error);
      return undefined;
    }
  }

  /** One line: what failed and why; once per outage for network failures. */
  warn(what: string, error: unknown): void {
    if (error instanceof MemorydError) {
      this.#logger.warn(`${this.#name}: ${what} failed: ${error.code}: ${error.message}`);
      return;
    }
    if (unreachable.has(this.url)) return;
    unreachable.add(this.url);
    this.#logger.warn(
      `${this.#name}: memoryd at ${this.url} is unreachable (${describe(error)}); ` +
        `${what} skipped, the session goes on without memory until it answers`,
    );
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === "TimeoutError") return "timed out";
    const cause = (error as { cause?: { code?: string } }).cause;
    return cause?.code ?? error.message;
  }
  return String(error);
}

/** The text of a message's content: a string, or the text parts of a list of parts. */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) =>
      part && typeof part === "object" && (part as { type?: unknown }).type === "text"
        ? String((part as { text?: unknown }).text ?? "")
        : "",
    )
    .filter(Boolean)
    .join("\n");
}

/** Fenced blocks memoryd injected earlier: never sent back to be remembered again. */
const INJECTED = /<memoryd-([a-z-]+)[^>]*>[\s\S]*?<\/memoryd-\1>/g;

export function withoutInjected(text: string): string {
  return text.replace(INJECTED, "").trim();
}
