// LoCoMo (../shared/data/locomo10.json; see its README): where the set is, and how a conversation turn is
// remembered by the benchmarks that use it (recall-quality.ts; the remember benchmarks through remember-texts.ts).
import { readFileSync } from 'node:fs';

export const LOCOMO_DATA = new URL('../../../shared/data/locomo10.json', import.meta.url).pathname;

export interface LocomoTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

/** A sample's sessions, in order, each with its turns. */
export function sessionsOf(conversation: Record<string, unknown>): { session: string; turns: LocomoTurn[] }[] {
  return Object.keys(conversation)
    .filter((key) => /^session_\d+$/.test(key))
    .map((session) => ({ session, turns: conversation[session] as LocomoTurn[] }));
}

/** A turn as remembered: "<speaker>: <text>", with the caption of the photo it shares. */
export const turnText = (turn: LocomoTurn): string => `${turn.speaker}: ${turn.text}${turn.blip_caption ? ` [shares a photo of ${turn.blip_caption}]` : ''}`;

/** Every turn of LoCoMo's conversations, in order, as bench/recall-quality.ts remembers them. */
export function locomoTurns(): string[] {
  const samples = JSON.parse(readFileSync(LOCOMO_DATA, 'utf8')) as { conversation: Record<string, unknown> }[];
  return samples.flatMap((sample) => sessionsOf(sample.conversation).flatMap(({ turns }) => turns.map(turnText)));
}
