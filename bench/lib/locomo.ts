// LoCoMo (../shared/data/locomo10.json; see its README): where the set is, and how a conversation turn is
// remembered by the benchmarks that use it (recall-quality.ts, remember.ts).

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
