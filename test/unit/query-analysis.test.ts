import { describe, expect, it } from 'vitest';
import { contentWords } from '../../src/memory/query-analysis.js';

describe('contentWords', () => {
  it.each([
    ['What time is my stand-up?', /^What is my stand-up\?/],
    ['How many steps does the user walk?', /^How steps does the user walk\?/],
    ['What kind of tea does the user like?', /^What tea does the user like\?/],
    ['What is the name of the user’s dog?', /^What is the the user's dog\?/],
    ['Which day of the week is bin day?', /^Which is bin day\?/],
    ['What would the user like me to call them?', /^What\s+the user like me to call them\?/],
  ])('drops answer-type words and modal verbs: %j', (query, expected) => {
    expect(contentWords(query)).toMatch(expected);
  });

  it('adds the other written forms of dates, numbers and irregular verbs', () => {
    expect(contentWords('What is on the 3rd of March?').split(' ')).toContain('3');
    expect(contentWords('What is on 21 June?').split(' ')).toEqual(expect.arrayContaining(['21st']));
    expect(contentWords('Does the user have two cats?').split(' ')).toContain('2');
    expect(contentWords('Who was third?').split(' ')).toEqual(expect.arrayContaining(['3', '3rd']));
    expect(contentWords('What happens in Sept?').split(' ')).toContain('september');
    expect(contentWords('When did Caroline go to the support group?').split(' ')).toEqual(expect.arrayContaining(['went', 'gone']));
    expect(contentWords('Who bought the car?').split(' ')).toContain('buy');
  });

  it('keeps May before a number as a month and leaves questions without such words alone', () => {
    expect(contentWords('What happened in May 2023?')).toBe('What happened in May 2023?');
    expect(contentWords('Where does the user live?')).toBe('Where does the user live?');
  });
});
