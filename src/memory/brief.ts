import type { BriefCandidate } from '../db/memories/brief.js';
import type { Memory } from './types.js';
import type { SpaceRef } from '../spaces/spaces.js';

/** A memory in a brief: shown with how often it was recalled. */
export interface BriefMemory extends Memory {
  readonly recalls: number;
}

export interface BriefGroup {
  /** The memory's first tag; null for untagged memories. */
  readonly tag: string | null;
  readonly memories: readonly BriefMemory[];
}

export interface Brief {
  readonly groups: readonly BriefGroup[];
  /** Memories shown, across groups. */
  readonly shown: number;
  /** Memories the subject has stored (expired ones included). */
  readonly stored: number;
  /** Characters of memory text shown, at most the budget. */
  readonly chars: number;
  /** The space it is about. */
  readonly space: SpaceRef;
}

/** Each list a brief draws on is this long: more than any budget shows, so the ranking below has a choice. */
export const BRIEF_CANDIDATES_PER_LIST = 60;
/** A memory longer than this is cut in a brief: it is an overview, and recall has the whole text. */
export const BRIEF_TEXT_CHARS = 300;
/** What a line costs beyond its text (id, bullet, newline), counted against the budget. */
const LINE_OVERHEAD_CHARS = 12;
/** A confirmation loses half its weight in this many days. */
const RECENCY_HALF_LIFE_DAYS = 30;
const DAY_MS = 86_400_000;

/**
 * How much a memory matters at the start of a conversation: its importance, how recently it was confirmed or
 * corrected, and how often recall has returned it (saturating: 3 recalls count half as much as many).
 */
export function briefScore(memory: BriefCandidate, now: Date): number {
  const ageDays = Math.max(0, now.getTime() - memory.lastConfirmedAt.getTime()) / DAY_MS;
  const recency = 0.5 ** (ageDays / RECENCY_HALF_LIFE_DAYS);
  const recalled = memory.recalls / (memory.recalls + 3);
  return 0.45 * memory.importance + 0.35 * recency + 0.2 * recalled;
}

/**
 * The brief: candidates best first while their lines fit in `maxChars`, grouped by first tag (the group of the
 * best memory first), each group best first. Ties go to the newer memory, so the order is stable.
 */
export function composeBrief(candidates: readonly BriefCandidate[], stored: number, maxChars: number, now: Date, space: SpaceRef): Brief {
  const ranked = candidates
    .map((memory) => ({ memory, score: briefScore(memory, now) }))
    .sort((a, b) => b.score - a.score || b.memory.id - a.memory.id);
  const groups = new Map<string | null, BriefMemory[]>();
  let used = 0;
  let chars = 0;
  for (const { memory } of ranked) {
    const truncated = memory.textChars > BRIEF_TEXT_CHARS;
    const text = truncated ? memory.text.slice(0, BRIEF_TEXT_CHARS) : memory.text;
    const cost = text.length + LINE_OVERHEAD_CHARS;
    if (used + cost > maxChars) continue;
    used += cost;
    chars += text.length;
    const { textChars: _chars, spaceKey: _key, ...rest } = memory;
    const tag = memory.tags[0] ?? null;
    const group = groups.get(tag) ?? [];
    group.push({ ...rest, text, textTruncated: truncated, space });
    groups.set(tag, group);
  }
  const list = [...groups].map(([tag, memories]) => ({ tag, memories }));
  return { groups: list, shown: list.reduce((sum, group) => sum + group.memories.length, 0), stored, chars, space };
}
