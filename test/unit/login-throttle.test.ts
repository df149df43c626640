import { describe, expect, it } from 'vitest';
import { LoginThrottle } from '../../src/auth/authorization-server/login-throttle.js';

const limits = { perUserAndAddress: 5, perAddress: 30, windowSeconds: 900, maxTracked: 1000 };
const ADDRESS = '203.0.113.7';

describe('LoginThrottle keys on the normalised user name', () => {
  it('gives " bob", "bob ", "ｂｏｂ", "BOB" and "bob" one budget of 5 failures', () => {
    const throttle = new LoginThrottle(limits, () => 0);
    for (const spelling of [' bob', 'bob ', 'ｂｏｂ', 'BOB', 'Bob']) {
      expect(throttle.retryAfter(spelling, ADDRESS), spelling).toBe(0);
      throttle.recordFailure(spelling, ADDRESS);
    }
    for (const spelling of ['bob', ' bob', 'bob ', 'ｂｏｂ', 'BOB', '\tbob\n', 'ＢＯＢ']) {
      expect(throttle.retryAfter(spelling, ADDRESS), spelling).toBe(900);
    }
    // Another user, and the same user from another address, are not held back.
    expect(throttle.retryAfter('alice', ADDRESS)).toBe(0);
    expect(throttle.retryAfter('bob', '198.51.100.1')).toBe(0);
  });

  it('clears the budget on a success under any spelling', () => {
    const throttle = new LoginThrottle(limits, () => 0);
    for (let i = 0; i < 5; i++) throttle.recordFailure('bob', ADDRESS);
    expect(throttle.retryAfter('bob', ADDRESS)).toBeGreaterThan(0);
    throttle.recordSuccess(' BOB ', ADDRESS);
    expect(throttle.retryAfter('bob', ADDRESS)).toBe(0);
  });

  it('gives every name that no user can have one shared budget', () => {
    const throttle = new LoginThrottle(limits, () => 0);
    for (const name of ['', ' ', '!bob', 'bob smith', 'x'.repeat(65)]) throttle.recordFailure(name, ADDRESS);
    expect(throttle.retryAfter('-anything-else', ADDRESS)).toBe(900);
    expect(throttle.retryAfter('bob', ADDRESS)).toBe(0);
  });

  it('ends the wait when the window ends', () => {
    let now = 0;
    const throttle = new LoginThrottle(limits, () => now);
    for (let i = 0; i < 5; i++) throttle.recordFailure('ＢＯＢ', ADDRESS);
    now = 899_000;
    expect(throttle.retryAfter('bob', ADDRESS)).toBe(1);
    now = 900_000;
    expect(throttle.retryAfter('bob', ADDRESS)).toBe(0);
  });
});
