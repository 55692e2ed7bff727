import { describe, expect, it } from 'vitest';
import {
  normaliseSpeakerRole,
  normaliseSpeakerRoleFilter,
  SPEAKER_ROLES,
  speakerRoleOrUnknown,
} from '../../../src/matching/engine/roles.ts';

describe('speaker roles', () => {
  it('has the fourteen roles of the closed set', () => {
    expect(SPEAKER_ROLES).toHaveLength(14);
  });

  it('accepts roles case-insensitively', () => {
    expect(normaliseSpeakerRole('guest')).toBe('GUEST');
    expect(normaliseSpeakerRole(' Panelist ')).toBe('PANELIST');
    for (const role of SPEAKER_ROLES) expect(normaliseSpeakerRole(role.toLowerCase())).toBe(role);
  });

  it('stores CO_HOST as HOST', () => {
    expect(normaliseSpeakerRole('CO_HOST')).toBe('HOST');
    expect(normaliseSpeakerRole('co_host')).toBe('HOST');
  });

  it('rejects anything outside the set', () => {
    expect(normaliseSpeakerRole('COHOST')).toBeUndefined();
    expect(normaliseSpeakerRole('co-host')).toBeUndefined();
    expect(normaliseSpeakerRole('')).toBeUndefined();
    expect(normaliseSpeakerRole(42)).toBeUndefined();
    expect(speakerRoleOrUnknown('DJ')).toBe('UNKNOWN');
    expect(speakerRoleOrUnknown(undefined)).toBe('UNKNOWN');
  });

  it('accepts every role but HOST as a speaker_roles filter value', () => {
    expect(normaliseSpeakerRoleFilter('guest')).toBe('GUEST');
    expect(normaliseSpeakerRoleFilter('HOST')).toBeUndefined();
    expect(normaliseSpeakerRoleFilter('co_host')).toBeUndefined();
    expect(normaliseSpeakerRoleFilter('nobody')).toBeUndefined();
  });
});
