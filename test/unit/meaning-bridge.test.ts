import { describe, expect, it } from 'vitest';
import { bridgedByMeaning, dictionaryWords } from '../../src/memory/meaning-bridge.js';
import { meaningCandidates, textWords } from '../../src/memory/query-analysis.js';

const bridges = (asked: string, text: string): boolean => bridgedByMeaning([asked], [textWords(text)])[0]!;

describe('bridgedByMeaning', () => {
  it.each([
    ['herb', 'The user dislikes coriander.'],
    ['antidepressant', 'The user takes 50 mg of sertraline every morning.'],
    ['vehicle', 'The user drives an old Volvo estate car.'],
    ['tourney', 'Nate won a big Valorant tournament.'],
  ])('finds a fact naming a kind of, or another word for, what %j asks about', (asked, text) => {
    expect(bridges(asked, text)).toBe(true);
  });

  it.each([
    ['herb', 'The user likes the name Juniper for a future dog.'],
    ['vehicle', 'The user cycles to work; the commute takes about 25 minutes.'],
    ['antidepressant', 'The user donates blood every four months.'],
    // Verbs are not bridged: "got" shares a sense with "receive", "expresses" is a plainer "say".
    ['receive', 'The support I got made a huge difference.'],
    ['say', 'Melanie expresses happiness for Caroline.'],
  ])('leaves %j apart from a fact about something else', (asked, text) => {
    expect(bridges(asked, text)).toBe(false);
  });

  it('answers for each text, in order', () => {
    expect(bridgedByMeaning(['herb'], [textWords('The user grows basil and mint.'), textWords('The user grows tomatoes.')])).toEqual([true, false]);
  });
});

describe('meaningCandidates and dictionaryWords', () => {
  it("takes the question's content words, not its answer type, dates, numbers or people", () => {
    expect(meaningCandidates('Which herb does the user grow?')).toEqual(['herb', 'grow']);
    expect(meaningCandidates('What kind of vehicle did my spouse buy in June 2021?')).toEqual(['vehicle', 'buy']);
    expect(meaningCandidates("How many children does the user's sister have?")).toEqual([]);
    expect(meaningCandidates('What does Sam do on Fridays at 9?')).toEqual([]);
  });

  it('keeps the words the dictionary knows', () => {
    expect(dictionaryWords(['herb', 'jellis', 'sertraline'])).toEqual(['herb', 'sertraline']);
  });
});
