import { afterEach, describe, expect, it, vi } from 'vitest';
import { NameTally, namingUser, SelfNames } from '../../src/memory/self-names.js';

const tallied = (texts: readonly string[]): string[] => {
  const tally = new NameTally();
  texts.forEach((text) => tally.add(text));
  return tally.names().sort();
};

/** `count` texts about other things, in the user's own words. */
const others = (count: number): string[] => Array.from({ length: count }, (_, index) => `The user likes item number ${index}.`);

describe('NameTally', () => {
  it('takes the names the memories say are the user’s', () => {
    expect(tallied(["The user's name is Marcus Delgado, and he was born on June 9, 1983."])).toEqual(['delgado', 'marcus']);
    expect(tallied(['My name is Noor.', 'I like tea.'])).toEqual(['noor']);
    expect(tallied(['Call me Jo.'])).toEqual(['jo']);
    expect(tallied(['My name is Noor; Noor is my name at work too.'])).toEqual(['noor']);
    expect(tallied(['I’m called Priya at work.'])).toEqual(['priya']);
  });

  it('takes the one name most memories are about, and only that', () => {
    const about = (name: string, count: number) => Array.from({ length: count }, (_, index) => `${name} has hobby number ${index}.`);
    expect(tallied([...about('Tomasz', 6), ...others(30)])).toEqual(['tomasz']);
    // Too few, or too small a share of the memories.
    expect(tallied([...about('Tomasz', 4), ...others(10)])).toEqual([]);
    expect(tallied([...about('Tomasz', 6), ...others(60)])).toEqual([]);
    // Two names about as often: neither is clearly the user.
    expect(tallied([...about('Tomasz', 6), ...about('Hana', 5), ...others(20)])).toEqual([]);
    // Said to be someone's: a relation of the user's is not the user.
    expect(tallied([...about('Oscar', 8), 'My son Oscar is seven.', ...others(20)])).toEqual([]);
    expect(tallied([...about('Leon', 8), "Leon, the user's fiancé, is a chef.", ...others(20)])).toEqual([]);
    expect(tallied([...about('Theo', 8), "Theo is the user's son.", ...others(20)])).toEqual([]);
    // Beside the user in many of them: someone the user does things with.
    expect(tallied([...Array.from({ length: 6 }, (_, index) => `Sam and I went to place ${index}.`), ...others(20)])).toEqual([]);
  });

  it('keeps a stated name that is a relation of the user’s out', () => {
    expect(tallied(["The user's name is Sam.", 'My brother Sam lives in Leeds.'])).toEqual([]);
  });
});

describe('namingUser', () => {
  it('writes each name as the user, capitalised only', () => {
    expect(namingUser("Tomasz's GP is Dr Kerr; Tomasz sees her yearly.", ['tomasz'])).toBe("the user's GP is Dr Kerr; the user sees her yearly.");
    expect(namingUser('Robin saw a robin.', ['robin'])).toBe('the user saw a robin.');
    expect(namingUser('Tomasza is here.', ['tomasz'])).toBe('Tomasza is here.');
    expect(namingUser('Nothing to change.', [])).toBe('Nothing to change.');
  });
});

describe('SelfNames', () => {
  it('keeps the names read from a space’s latest texts, then counts the texts stored in it', () => {
    const names = new SelfNames();
    expect(names.known('space-a')).toBeUndefined();
    // Stored before its texts were read: counted when they are (the database has it).
    names.stored('space-a', "The user's name is Wim.");
    expect(names.known('space-a')).toBeUndefined();
    expect(names.read('space-a', ['My dentist is Dr Kerr.'])).toEqual([]);
    expect(names.known('space-a')).toEqual([]);
    names.stored('space-a', "The user's name is Ilse.");
    names.stored('space-b', "The user's name is Joost.");
    expect(names.known('space-a')).toEqual(['ilse']);
    expect(names.known('space-b')).toBeUndefined();
    names.forget('space-a');
    expect(names.known('space-a')).toBeUndefined();
    expect(names.due('space-a')).toBe(true);
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('asks for a space’s texts again after ten minutes, using the names last read until then', () => {
    vi.useFakeTimers({ now: Date.UTC(2026, 10, 30, 8) });
    const names = new SelfNames();
    names.read('space-a', ["The user's name is Ilse."]);
    vi.advanceTimersByTime(9 * 60_000);
    expect(names.due('space-a')).toBe(false);
    vi.advanceTimersByTime(60_000);
    expect(names.due('space-a')).toBe(true);
    expect(names.known('space-a')).toEqual(['ilse']);
    names.read('space-a', ['My name is Wim.']);
    expect(names.due('space-a')).toBe(false);
    expect(names.known('space-a')).toEqual(['wim']);
  });
});
