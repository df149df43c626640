import { describe, expect, it } from 'vitest';
import { sameFact } from '../../src/memory/same-fact.js';

describe('sameFact', () => {
  it.each([
    ['The user is allergic to penicillin', 'The user is allergic to penicillin'],
    ['The user is allergic to penicillin', 'User is allergic to penicillin.'],
    ['The user is allergic to penicillin', 'the user is allergic to Penicillin!'],
    ["User's dog is named Rex", 'The user has a dog named Rex'],
    ['The user lives in Berlin', 'User lives in Berlin.'],
    ['The user was born in 1985', 'the user was born in 1985'],
  ])('treats %j and %j as the same fact', (a, b) => {
    expect(sameFact(a, b)).toBe(true);
    expect(sameFact(b, a)).toBe(true);
  });

  it.each([
    ["The user's blood type is O negative", "The partner's blood type is A positive"],
    ["The user's blood type is O negative", "The user's blood type is A negative"],
    ['The user has two children', 'The user has three children'],
    ['The user was born in 1985', 'The user was born in 1987'],
    ['The user lives in Berlin', 'The user lives in Munich'],
    ['The user likes cats', 'The user does not like cats'],
    ['The user likes cats', "The user doesn't like cats"],
    ['The user works at Google as an engineer', 'The user works at Google as a manager'],
    ['Meeting with Anna on Friday', 'Meeting with Anna on Monday'],
    ['The user takes 20 mg of citalopram', 'The user takes 40 mg of citalopram'],
    ['The user favourite drink is green tea', 'The user likes drinking green tea best'],
  ])('keeps %j and %j apart', (a, b) => {
    expect(sameFact(a, b)).toBe(false);
    expect(sameFact(b, a)).toBe(false);
  });
});
