// A task's live output (docs/api.md, "Live output"): the reader's place in it, and what each
// answer of `GET /v1/tasks/{taskId}/output` adds to it. AitasksClient.followOutput loops over it.
import type { components } from "./generated/openapi.js";

/** `GET /v1/tasks/{taskId}/output`: the text after the reader's offset, and where the stream and the task stand. */
export type TaskOutput = components["schemas"]["TaskOutput"];

/** Text that `followOutput` read. */
export interface OutputPiece {
  /** The text, following what the reader has of this segment. */
  text: string;
  /** The segment it belongs to (1, 2, … in the order the streams began). */
  segment: number;
  /** The attempt that wrote it. */
  attempt: number;
  /**
   * A new segment began after one the reader has text of: drop that text (a retry, a repair
   * turn or a fallback call writes its answer afresh). This piece starts the new one; its text
   * may be empty.
   */
  restarted: boolean;
  /** Where this text ends in its segment: with `segment`, the place a reconnect resumes from. */
  next: number;
}

/** One read's place and wait. */
export interface OutputQuery {
  /** The segment `after` belongs to (the last answer's `segment`); omitted: the current one. */
  segment?: number;
  /** Characters (Unicode code points, not UTF-16 units) of that segment the reader has (default 0). */
  after?: number;
  /** Seconds the API may hold the read for something new (0..20; default 0). */
  wait?: number;
}

/** How long to pause after an answer that came back before its wait with nothing new. */
export const OUTPUT_IDLE_PAUSE_MS = 1000;

/**
 * The pause before the next read: after an answer with nothing new, what is left of
 * OUTPUT_IDLE_PAUSE_MS since the read was sent, whatever the read's wait (a follower whose reads
 * do not wait, or a server that does not hold them, reads at most once a second).
 */
export function idlePauseMs(idle: boolean, sinceAskedMs: number): number {
  return idle ? Math.max(0, OUTPUT_IDLE_PAUSE_MS - sinceAskedMs) : 0;
}

/** What one answer means to the reader. */
export interface OutputStep {
  piece?: OutputPiece;
  /** The task has ended and its stream is read to its end: nothing more will come. */
  done: boolean;
  /** The answer changed nothing for the reader. */
  idle: boolean;
}

/** The reader's place in a task's live output. */
export class OutputPlace {
  private segment: number | undefined;
  private after: number;
  /** The segment of the text handed out so far. */
  private shown: number | undefined;
  private streamEnded = false;

  constructor(start: { segment?: number | undefined; after?: number | undefined } = {}) {
    this.segment = start.segment;
    this.after = Math.max(0, start.after ?? 0);
    this.shown = this.after > 0 ? start.segment : undefined;
  }

  /** The query of the next read. */
  query(wait: number): OutputQuery {
    return { ...(this.segment === undefined ? {} : { segment: this.segment }), after: this.after, ...(wait > 0 ? { wait } : {}) };
  }

  take(answer: TaskOutput): OutputStep {
    const done = answer.ended && (answer.segment === null || answer.final || answer.text === "");
    if (answer.segment === null || answer.attempt === null) return { done, idle: !done };
    const segment = answer.segment;
    const moved = this.segment !== segment;
    const restarted = this.shown !== undefined && this.shown !== segment;
    const news = moved || answer.final !== this.streamEnded || answer.text !== "";
    this.segment = segment;
    this.after = answer.next;
    this.streamEnded = answer.final;
    if (!restarted && answer.text === "") return { done, idle: !news && !done };
    this.shown = segment;
    const piece = { text: answer.text, segment, attempt: answer.attempt, restarted, next: answer.next };
    return { piece, done, idle: false };
  }
}
