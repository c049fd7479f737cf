/**
 * memoryd's conversation for an OpenClaw session.
 *
 * OpenClaw keeps a session's id across `/new` and `/reset` (the transcript
 * starts over, the id stays), while memoryd's conversations and checkpoints
 * are one per session as the user sees it. So each reset starts a new
 * generation: `<sessionId>` first, then `<sessionId>.1`, `.2`… (a session
 * scope allows `.`, not `~`). The count lives in the gateway process: after
 * a gateway restart a session continues the conversation it was in, or its
 * first one if it had been reset.
 */

export class Conversations {
  readonly #generation = new Map<string, number>();

  id(sessionId: string): string {
    const n = this.#generation.get(sessionId) ?? 0;
    return n ? `${sessionId}.${n}` : sessionId;
  }

  /** The session's transcript starts over: the next turns are a new conversation. */
  reset(sessionId: string): void {
    this.#generation.set(sessionId, (this.#generation.get(sessionId) ?? 0) + 1);
  }
}

/**
 * One value per gateway process, whichever registration of the plugin asks.
 * OpenClaw registers a plugin more than once in one process (the context
 * engine, the hooks and the tools of a turn may each come from another
 * registration), and what one of them learns, a reset above all, the others
 * must see: otherwise the engine moves to the new conversation while the
 * hooks save into the old one.
 */
export function processWide<T>(name: string, make: () => T): T {
  const slot = Symbol.for(`memoryd.openclaw.${name}`);
  const holder = globalThis as unknown as Record<symbol, unknown>;
  if (!(slot in holder)) holder[slot] = make();
  return holder[slot] as T;
}
