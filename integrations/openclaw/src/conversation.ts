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
