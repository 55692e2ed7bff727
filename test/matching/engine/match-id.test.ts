import { describe, expect, it } from 'vitest';
import { matchId } from '../../../src/matching/engine/match-id.ts';

describe('matchId', () => {
  it('is the same UUID for the same alert and episode', () => {
    expect(matchId('alert-1', 'ep-1')).toBe(matchId('alert-1', 'ep-1'));
  });

  it('is a version 5 UUID with the RFC 4122 variant', () => {
    expect(matchId('alert-1', 'ep-1')).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });

  it('differs when either id differs, including ids that concatenate alike', () => {
    const ids = new Set([
      matchId('alert-1', 'ep-1'),
      matchId('alert-2', 'ep-1'),
      matchId('alert-1', 'ep-2'),
      matchId('a', 'bc'),
      matchId('ab', 'c'),
    ]);
    expect(ids.size).toBe(5);
  });
});
